"""``dialogbench repair``: a lake that stored cells twice (two overlapping runs) keeps one copy of each. For every
table that holds cells (``Table.done``), the copies of a cell are its computed rows grouped by file; the copy
kept is the earliest (``created_at``, then file path), so every rerun picks the same one. Rows of other copies
go: each file holding some is rewritten without them as a new file whose record ``supersedes`` the old one
(reads leave a superseded file out from the moment its replacement is committed), then the old one is
removed. A kill at any point leaves every cell at least one row, and a rerun first finishes the removals.
Rows that are not computed cells (a game that ended in backend errors) and non-cell tables (failures, plans,
runs) are logs, left alone. Run it when no run is writing the lake."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from dialogbench.lake import manifest
from dialogbench.lake.store import Lake


@dataclass
class Repaired:
    """Per table: duplicate rows removed, files rewritten (or removed when nothing of theirs was kept)."""

    table: str
    rows_removed: int = 0
    files_rewritten: int = 0


def losers(lake: Lake, table, files: list[Path]) -> dict[Path, list[int]]:
    """Row numbers, by file, of the computed rows of ``table`` that are not their cell's kept copy."""
    if len(files) < 2:
        return {}
    paths = "[" + ", ".join(f"'{p}'" for p in files) + "]"
    at = "created_at" if "created_at" in table.schema.names else "CAST(NULL AS TIMESTAMPTZ)"
    where = f"WHERE {table.done}" if table.done not in (None, "true") else ""
    sql = f"""
        WITH src AS (SELECT {table.key} AS k, {at} AS written, filename AS f, file_row_number AS i
                     FROM read_parquet({paths}, union_by_name=true, hive_partitioning=false, filename=true,
                                       file_row_number=true) {where}),
        copies AS (SELECT k, f, min(written) AS first_written FROM src GROUP BY k, f),
        ranked AS (SELECT k, f, row_number() OVER (PARTITION BY k ORDER BY first_written NULLS LAST, f) AS nth
                   FROM copies)
        SELECT src.f, src.i FROM src JOIN ranked USING (k, f) WHERE nth > 1 ORDER BY src.f, src.i"""
    found: dict[Path, list[int]] = {}
    with duckdb.connect() as con:
        for f, i in con.sql(sql).fetchall():
            found.setdefault(Path(f), []).append(int(i))
    return found


def repair(lake: Lake, *, dry_run: bool = False) -> list[Repaired]:
    """Keep one copy of every cell in every cell table; returns what was (``dry_run``: would be) removed."""
    done = []
    for table in lake.layout.tables.values():
        if table.done is None or table.repeated:  # no cells; cells computed every run (their rows are history)
            continue
        snap = lake.snapshot(table.name)
        if not dry_run:
            for path in snap.superseded:  # an interrupted repair: the rewrite is committed, the old file goes
                manifest.remove(path)
        result = Repaired(table.name)
        for path, rows in losers(lake, table, snap.good).items():
            result.rows_removed += len(rows)
            result.files_rewritten += 1
            if not dry_run:
                _rewrite(lake, table.name, path, set(rows))
        done.append(result)
    return done


def _rewrite(lake: Lake, table: str, path: Path, drop: set[int]) -> None:
    data = pq.read_table(path)
    keep = data.filter(pa.array([i not in drop for i in range(data.num_rows)]))
    if keep.num_rows:
        partition = dict(part.split("=", 1) for part in path.parent.relative_to(lake.table_dir(table)).parts)
        lake.write(table, keep, partition=partition, name=f"{path.stem}-dedup.parquet", supersedes=(path.name,))
    manifest.remove(path)
