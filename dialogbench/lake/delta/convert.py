"""``dialogbench convert``: a folder lake (recorded Parquet files) copied into a new lake of Delta tables.

The source is only read, under its lease (no run writes it meanwhile): each table of the layout, through the files
that pass the lake's check against their records (a damaged file is left out, with the warning every read gives;
run ``dialogbench verify`` first). Each table is one commit (an append of all its rows), so a table of the target is
either copied whole or not at all; a rerun after a kill skips the tables whose row count matches and copies the rest.
Every row keeps the path of the file it came from (``NAME_COLUMN``), so a named write of a later run (a stage's row
of a resumed run) replaces what it replaced before. Afterwards each table's rows are counted on both sides; a
difference is an error naming the table.

The ``reports`` folder (every run's HTML report and results) is copied too, file by file, into the target's folder
(its local folder for a lake on S3). What is not copied, and why: ``_state`` (checkpoints of unfinished work: a run on
the new lake starts that work again), ``_quarantine`` (damaged files, kept for a person) and the catalog (its views
name the source's files; ``dialogbench catalog`` or the next run writes the new lake's)."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from dialogbench.lake.delta.errors import DeltaStoreError
from dialogbench.lake.delta.tables import NAME_COLUMN
from dialogbench.lake.store import Lake


class ConvertError(DeltaStoreError):
    """The conversion cannot start (the source is a Delta lake, the target a folder lake) or a table's copy does not
    hold the source's rows."""


@dataclass(frozen=True)
class Converted:
    """A table: the rows in the source's committed files, the rows in the target after, and whether this call copied
    it (False: the target held it already, from an earlier call)."""

    table: str
    source_rows: int
    target_rows: int
    copied: bool


def convert(source: Lake, target: Lake) -> list[Converted]:
    """Copy every table of ``source`` (a folder lake, current format) into ``target`` (a new lake, or a Delta lake an
    earlier call began), both opened with their layout; the caller holds both leases and has made ``target`` a Delta
    lake (``version.ensure_current(target, tables="delta")``)."""
    if source.tables_kind() == "delta":
        raise ConvertError(f"{source.root}: its tables are Delta tables already; nothing to convert")
    if target.tables_kind() != "delta":
        raise ConvertError(f"{target.root}: not a Delta lake (its marker says its tables are files); convert into a "
                           "new folder")
    if Path(source.root).resolve() == Path(target.root).resolve():
        raise ConvertError(f"{source.root}: convert into another folder (--to); the source is only read")
    done = []
    for name, table in source.layout.tables.items():
        files, _ = source.readable(name)
        delta = target.delta(name)
        stored = _rows(target, name)
        if not files:
            done.append(Converted(name, 0, stored, False))
            continue
        data = _read(source, table, files)
        if stored == data.num_rows:
            done.append(Converted(name, data.num_rows, stored, False))
            continue
        if stored:
            raise ConvertError(f"{target.table_dir(name)}: holds {stored} rows, the source {source.table_dir(name)} "
                               f"{data.num_rows}: rows were written to the target since an earlier convert; remove "
                               "the target and convert again")
        delta.append(name, data)
        after = _rows(target, name)
        if after != data.num_rows:
            raise ConvertError(f"{target.table_dir(name)}: {after} rows after the copy, the source "
                               f"{source.table_dir(name)} has {data.num_rows}")
        done.append(Converted(name, data.num_rows, after, True))
    _copy_reports(Path(source.root) / "reports", Path(target.root) / "reports")
    return done


def _copy_reports(source: Path, target: Path) -> None:
    """Every file under ``source`` not yet at ``target`` (a rerun copies what a killed one did not), links skipped."""
    if not source.is_dir() or source.is_symlink():
        return
    for path in sorted(source.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        dest = target / path.relative_to(source)
        if dest.exists():
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{dest.name}.copy")
        shutil.copyfile(path, tmp)
        os.replace(tmp, dest)


def _rows(lake: Lake, name: str) -> int:
    delta = lake.delta(name)
    return sum(added.rows or 0 for added in delta.added(name))


def _read(source: Lake, table, files: list[Path]) -> pa.Table:
    """The rows of ``files`` in ``table``'s schema (a column older files lack: nulls), each with the path of its file
    inside the table (``NAME_COLUMN``)."""
    paths = "[" + ", ".join("'" + str(p).replace("'", "''") + "'" for p in files) + "]"
    with duckdb.connect() as con:
        data = con.sql(f"SELECT * FROM read_parquet({paths}, union_by_name=true, hive_partitioning=false, "
                       "filename=true)").to_arrow_table()
    columns = []
    for field in table.schema:
        column = data.column(field.name) if field.name in data.column_names else pa.nulls(data.num_rows, field.type)
        columns.append(column.cast(field.type))
    base = Path(source.table_dir(table.name)).absolute()
    named = [Path(f).absolute().relative_to(base).as_posix() for f in data.column("filename").to_pylist()]
    return pa.Table.from_arrays([*columns, pa.array(named, pa.string())],
                                schema=pa.schema([*table.schema, pa.field(NAME_COLUMN, pa.string())]))
