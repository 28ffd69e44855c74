"""Copy a folder lake (``dialogbench.lake.store.Lake``) into a ``DeltaCellStore``, table by table, and check it.

Each table is copied with ``insert_missing`` on its cell key, so the copy is idempotent: running it again, or after a
copy that was killed halfway, or while the folder lake is still being written, adds only what the target lacks and
never a row twice. Afterwards each table's rows are counted on both sides and a difference is an error naming the
table: the target holds each key once, so a source with a key twice (a doubled cell) fails here too, as it should.

The source is only read: through ``Lake.read`` (the files that pass the lake's cheap check against their records;
a damaged file is left out with a warning, as every query does), so no file, record or folder of it changes. A
table's partition columns are taken from its folder names (``<column>=<value>``), so the Delta table is partitioned
the same way. A table is read whole into memory, which fits the lake's tables today; a larger one would be copied
file by file (each an ``insert_missing``)."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from dialogbench.lake.delta.errors import DeltaStoreError
from dialogbench.lake.delta.store import DeltaCellStore
from dialogbench.lake.store import Lake


class MigrationMismatch(DeltaStoreError):
    """After a table's copy, the target's row count differs from the source's."""


def source_tables(source: Lake) -> list[str]:
    """The tables of a folder lake: the folders under its root that are not ``_``- or ``.``-prefixed (``_state``,
    ``_quarantine``) and hold at least one Parquet file (so ``raw`` and ``reports``, which hold none, are not)."""
    root = Path(source.root)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such lake folder")
    return sorted(p.name for p in root.iterdir()
                  if p.is_dir() and not p.is_symlink() and not p.name.startswith(("_", ".")) and source.files(p.name))


def partition_columns(source: Lake, table: str) -> list[str]:
    """The ``<column>=<value>`` folder levels of the table's files, outermost first; an error naming the table when
    its files disagree (a lake written with two layouts)."""
    layouts = set()
    for path in source.files(table):
        parts = path.relative_to(source.table_dir(table)).parts[:-1]
        layouts.add(tuple(part.split("=", 1)[0] for part in parts if "=" in part))
    if len(layouts) > 1:
        raise ValueError(f"{source.table_dir(table)}: its files are partitioned in different ways: {sorted(layouts)}")
    return list(layouts.pop()) if layouts else []


def migrate(source: Lake, target: DeltaCellStore, *, keys: Mapping[str, Sequence[str]]) -> dict[str, tuple[int, int]]:
    """Copy every table of ``source`` into ``target`` with ``insert_missing`` on ``keys[table]`` (the cell's key
    columns); returns, per table, (source rows, target rows), which are equal. Every table must have its key: a
    table with none given, or a key for a table the lake lacks, is an error before anything is copied. A table whose
    counts differ after its copy raises ``MigrationMismatch`` naming it (the tables before it stay copied; rerun
    after fixing the source)."""
    tables = source_tables(source)
    unkeyed = [table for table in tables if table not in keys]
    unknown = [table for table in keys if table not in tables]
    if unkeyed or unknown:
        problems = ([f"no cell key given for {', '.join(unkeyed)}"] if unkeyed else []) + (
            [f"no such table in {source.root}: {', '.join(unknown)}"] if unknown else [])
        raise ValueError(f"migrate {source.root} -> {target.location}: " + "; ".join(problems))
    counts: dict[str, tuple[int, int]] = {}
    for table in tables:
        data = source.read(table)
        target.insert_missing(table, data, keys=keys[table], partition_by=partition_columns(source, table) or None)
        stored = target.read(table, columns=list(keys[table])).num_rows
        if stored != data.num_rows:
            raise MigrationMismatch(f"{target.location}/{table}: {stored} rows after the copy, the source "
                                    f"{source.table_dir(table)} has {data.num_rows} (a key stored twice in the "
                                    "source, or rows in the target that the source lacks)")
        counts[table] = (data.num_rows, stored)
    return counts
