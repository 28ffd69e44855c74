"""The ad-hoc query path, read-only: what ``dialogbench query`` and ``dialogbench export`` run SQL on.

The connection has every view, then DuckDB is locked down before any user SQL runs: file access only
under the lake (``allowed_directories`` with ``enable_external_access = false``: no reading /etc, no
writing elsewhere, no extensions) and the configuration locked (``lock_configuration``). DuckDB still
lets SQL write and attach inside an allowed directory, so only statements that read are accepted:
SELECT (and FROM-first, WITH, DESCRIBE, SHOW, SUMMARIZE, which parse to it), EXPLAIN and PRAGMA (its
settings are locked). COPY, ATTACH, EXPORT, CREATE, INSERT, DROP, SET, … are refused before anything runs."""

from __future__ import annotations

from pathlib import Path

import duckdb

from dialogbench.lake.catalog import connect
from dialogbench.lake.store import Lake

READS = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN, duckdb.StatementType.PRAGMA}


class QueryRefused(ValueError):
    """SQL that would write, attach or change settings (the message names the statement)."""


def read_only_connection(lake: Lake, *, board: str | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with the lake's views (their board-scoped ones reading ``board``; None: the lake's
    default board) that can read only the lake's files."""
    con = connect(lake, board=board)
    root = str(lake.root.resolve()).rstrip("/") + "/"
    con.execute("SET allowed_directories = [?]", [root])
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return con


def check_reads_only(sql: str) -> None:
    """Raise ``QueryRefused`` unless every statement in ``sql`` only reads."""
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryRefused(f"the query does not parse: {exc}") from None
    for number, statement in enumerate(statements, 1):
        if statement.type not in READS:
            kind = statement.type.name
            raise QueryRefused(
                f"statement {number} is {kind}: `dialogbench query` only reads the lake (SELECT, EXPLAIN, "
                "PRAGMA). To write a result to a file use `dialogbench export \"SELECT …\" --out FILE`; the "
                "lake's own files are written only by runs.")


def query(con: duckdb.DuckDBPyConnection, sql: str) -> duckdb.DuckDBPyRelation | None:
    check_reads_only(sql)
    return con.sql(sql)


def export(lake: Lake, sql: str, out: Path, *, fmt: str | None = None, board: str | None = None) -> int:
    """Write the result of a read-only ``sql`` to ``out`` (parquet, csv or json, by ``fmt`` or the suffix),
    atomically; ``out`` must be outside the lake. Returns the row count."""
    import os

    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    out = Path(out)
    fmt = fmt or {".parquet": "parquet", ".csv": "csv", ".json": "json", ".jsonl": "json"}.get(out.suffix.lower())
    if fmt is None:
        raise QueryRefused(f"{out}: say --format parquet|csv|json (no known suffix)")
    if out.resolve().is_relative_to(lake.root.resolve()):
        raise QueryRefused(f"{out}: is inside the lake {lake.root}; export writes outside it (runs own the lake)")
    with read_only_connection(lake, board=board) as con:
        relation = query(con, sql)
        if relation is None:
            raise QueryRefused("the query returns no result to export")
        table = relation.to_arrow_table()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    if fmt == "parquet":
        pq.write_table(table, tmp, compression="zstd")
    elif fmt == "csv":
        pacsv.write_csv(table, tmp)
    else:
        import json

        tmp.write_text("".join(json.dumps(row, default=str) + "\n" for row in table.to_pylist()))
    os.replace(tmp, out)
    return table.num_rows
