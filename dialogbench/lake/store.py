"""Hive-partitioned Parquet tables under one root, written atomically with a checksummed record per file
(``lake.manifest``), read with DuckDB (only files that pass a cheap check against their record: ``lake.health``).
A lake whose marker says ``"tables": "delta"`` keeps its tables as Delta tables instead (``lake.delta.tables``):
``Lake`` writes and lists them through delta-rs, and everything above it reads them the same way."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import uuid
from pathlib import Path
from typing import Callable, ContextManager, Iterator, Mapping

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from dialogbench.lake import health, links, manifest, space
from dialogbench.lake.layout import Layout, NoLayout
from dialogbench.lake.names import safe_name

TMP_SUFFIX = manifest.TMP_SUFFIX
QUARANTINE = "_quarantine"  # damaged files moved aside by lake.verify (not a table)
WORK = "_state"  # what writers keep besides the tables (checkpoints, dispatched attempts): the lake's too
MARKER = "lake.json"  # the lake's format marker (lake.version writes it): {"format": N, "tables": "delta"|"files"}
_LIST_TRIES = 5  # listings of a table whose folders another process is removing (Lake.files)
log = logging.getLogger("dialogbench.lake")
_warned: set[tuple[str, str]] = set()


class _Commits:
    """What every write of this process commits under: nothing, or a dispatched attempt's guard
    (``guard_commits``: its unit's lock, its token still current, and the commit noted for ``dispatch.settle``)."""

    guard: Callable[[Path], ContextManager] = contextlib.nullcontext


_COMMITS = _Commits()


@contextlib.contextmanager
def guard_commits(guard: Callable[[Path], ContextManager]) -> Iterator[None]:
    """Every ``Lake.write`` of this process commits (both renames) under ``guard(tmp)``, ``tmp`` the temp file it
    commits: a context manager that raises to refuse it."""
    before, _COMMITS.guard = _COMMITS.guard, guard
    try:
        yield
    finally:
        _COMMITS.guard = before


class Lake:
    """``root/<table>/<key>=<value>/…/part-<id>.parquet``. Partition values are also stored as
    columns, so readers never depend on the directory names. On a Delta lake (``tables_kind``), ``root/<table>`` is a
    Delta table and ``files``, ``snapshot``, ``write`` and ``read_named`` go through ``delta``."""

    def __init__(self, root: str | os.PathLike, *, layout: Layout | None = None, root_sql: str | None = None,
                 tables: str | None = None) -> None:
        """``layout``: its tables, reference tables and SQL (``lake.layout``), what the catalog, ``repair`` and
        ``migrate`` need (``registry.open_lake`` passes the registered families'); reading and writing one table
        by name needs none. ``root_sql``: a SQL expression for the lake's folder (ending in ``/``) to write file
        paths against (``path_sql``) instead of as literals: the saved catalog's ``lake_root()``, so it reads the
        files beside it wherever the lake is copied or moved."""
        self.root = Path(root)
        self.root_sql = root_sql
        self._layout = layout
        self._readable: dict[str, tuple[list[Path], bool]] | None = None
        self._tables = tables  # "delta" or "files" once known (the marker's "tables"; ``tables_kind``)
        self._store: str | None = None  # where a Delta lake's tables are when not in its folder (the marker's "store")
        self._delta = None

    def tables_kind(self) -> str:
        """How the lake stores its tables: ``"delta"`` (Delta tables, ``lake.delta.tables``) or ``"files"`` (this
        module's recorded files), as its marker says; ``"files"`` for a lake with no marker yet (not remembered:
        the run that makes the lake writes the marker before its first row)."""
        if self._tables is None:
            try:
                text = links.read_regular(self.root / MARKER, 4096)
            except (FileNotFoundError, NotADirectoryError):
                return "files"
            except links.LakeLinkError:
                return "files"  # lake.version refuses the lake, naming the link
            try:
                marker = json.loads(text)
                found, store = marker.get("tables", "files"), marker.get("store")
            except (ValueError, AttributeError):
                return "files"  # lake.version refuses the marker, naming what is wrong
            self._tables = found if found in ("delta", "files") else "files"
            self._store = store if isinstance(store, str) else None
        return self._tables

    def store(self) -> str | None:
        """Where the lake's Delta tables are when not in its folder (``s3://…``: ``lake.delta.mirror``), else None."""
        self.tables_kind()
        return self._store

    def delta(self, table: str):
        """The lake's ``DeltaTables`` when ``table`` is a Delta table of it (every table of a Delta lake but
        ``WORK``, the writers' own files), else None."""
        if table == WORK or table.startswith((".", "_")) or self.tables_kind() != "delta":
            return None
        if self._delta is None:
            from dialogbench.lake.delta.tables import DeltaTables  # deltalake only for a Delta lake
            self._delta = DeltaTables(self.root, store=self._store)
        return self._delta

    def _copy(self, root: Path, root_sql: str | None) -> "Lake":
        lake = Lake(root, layout=self._layout, root_sql=root_sql, tables=self._tables)
        lake._store, lake._delta = self._store, self._delta if root == self.root else None
        return lake

    @property
    def layout(self) -> Layout:
        if self._layout is None:
            raise NoLayout(f"{self.root}: this lake was opened without its layout (its tables and SQL): open it "
                           "with dialogbench.run.registry.open_lake")
        return self._layout

    def rooted(self, root_sql: str | None) -> "Lake":
        """This lake, its file paths written against ``root_sql`` (see ``__init__``)."""
        return self._copy(self.root, root_sql)

    def absolute(self) -> "Lake":
        """This lake by its absolute path: what a process that changes its working folder (``lake.confined``'s child)
        must be given, or a relative root names a folder that is not there and every table reads empty."""
        return self._copy(self.root.absolute(), self.root_sql)

    def pinned(self) -> "Lake":
        """This lake with each table's file list taken once and kept: building every view in one go checks
        each file once instead of once per view that reads its table."""
        lake = self.rooted(self.root_sql)
        lake._readable = {}
        return lake

    def table_dir(self, table: str) -> Path:
        return self.root / table

    def files(self, table: str) -> list[Path]:
        """Every Parquet file on disk under the table, committed or not (``readable`` is what queries read). A folder
        removed while it is listed (one a run's preflight made to probe, then removed) is listed again. A Delta
        table's: the files of its latest version."""
        if (delta := self.delta(table)) is not None:
            return delta.files(table)
        for _ in range(_LIST_TRIES - 1):
            try:
                return sorted(self.table_dir(table).rglob("*.parquet"))
            except FileNotFoundError:
                continue
        return sorted(self.table_dir(table).rglob("*.parquet"))

    def snapshot(self, table: str, level: str = "stat") -> health.Snapshot:
        if (delta := self.delta(table)) is not None:
            return delta.snapshot(table, level)
        return health.snapshot(self.table_dir(table), table, level)

    def readable(self, table: str) -> tuple[list[Path], bool]:
        """The table's committed files that pass the cheap check, and whether they are all its files (then a
        glob reads exactly them). Each file left out is named once per process in a warning."""
        if self._readable is not None and table in self._readable:
            return self._readable[table]
        snap = self.snapshot(table)
        for damage in snap.damaged:
            if (str(damage.path), damage.problem) not in _warned:
                _warned.add((str(damage.path), damage.problem))
                log.warning("left out of every query: %s; `dialogbench verify` quarantines it and the next run "
                            "recomputes its cells", damage.line(self.root))
        clean = snap.clean and self.delta(table) is None  # a Delta table's folder holds more than its version's files
        if self._readable is not None:
            self._readable[table] = (snap.good, clean)
        return snap.good, clean

    def has(self, table: str) -> bool:
        return bool(self.files(table))

    def glob(self, table: str) -> str:
        return str(self.table_dir(table) / "**" / "*.parquet")

    def write(self, table: str, data: pa.Table, *, partition: Mapping[str, str] | None = None,
              name: str | None = None, supersedes: tuple[str, ...] = ()) -> Path | None:
        """Write ``data`` as one new file (or replace ``name``) atomically: temp file, fsync, its record (checksum,
        size, rows) renamed into place, then the file renamed into place. A reader or a killed writer never sees
        a partial file, and a committed file always has its record. A write that fails removes its temp files at
        once; one that fails for a full disk raises ``space.DiskFull`` naming the file and the space left."""
        if data.num_rows == 0 and name is None:
            return None
        if (delta := self.delta(table)) is not None:
            return self._commit_delta(delta, table, data, partition=partition, name=name)
        directory = self.table_dir(table)
        for key, value in (partition or {}).items():
            directory = directory / f"{key}={safe_name(value)}"
        final = directory / (name or f"part-{uuid.uuid4().hex}.parquet")
        tmp = directory / manifest.temp_name(final.name)
        with contextlib.ExitStack() as commit:
            try:
                directory.mkdir(parents=True, exist_ok=True)
                with os.fdopen(links.create_new(tmp), "wb") as handle:
                    pq.write_table(data, handle, compression="zstd")
                    handle.flush()
                    os.fsync(handle.fileno())
                record = manifest.describe(tmp, table=table, rows=data.num_rows, tmp=tmp, name=final.name,
                                           supersedes=supersedes)
                # from here to the rename: a dispatched attempt commits only while it is its unit's current one
                commit.enter_context(_COMMITS.guard(tmp))
                manifest.write(final, record)  # the last step that can fail before the commit: it cleans up itself
            except Exception as exc:
                tmp.unlink(missing_ok=True)
                if space.is_disk_full(exc):
                    raise space.disk_full(final, self.root, exc) from exc
                raise
            try:
                os.replace(tmp, final)
            except OSError:  # not committed: a new file's record goes, then its temp file, so no later roll-forward
                if not os.path.lexists(final):  # adds it beside the cells its caller computes again (a chunk retried)
                    manifest.record_path(final).unlink(missing_ok=True)
                    tmp.unlink(missing_ok=True)
                raise
        fsync_path(directory)
        return final

    def _commit_delta(self, delta, table: str, data: pa.Table, *, partition: Mapping[str, str] | None,
                      name: str | None) -> Path:
        """``write`` on a Delta table (``lake.delta.tables``): one commit, under the same guard as a file's rename (a
        dispatched attempt commits only while it is its unit's current one). The guard is handed a temp name in the
        table's folder that no file has, so a killed attempt's note settles as nothing to finish."""
        directory = self.table_dir(table)
        directory.mkdir(parents=True, exist_ok=True)
        spec = self._layout.tables.get(table) if self._layout is not None else None
        try:
            with _COMMITS.guard(directory / manifest.temp_name(f"delta-{uuid.uuid4().hex}.parquet")):
                delta.write(table, data, spec=spec, partition=partition, name=name)
        except Exception as exc:
            if space.is_disk_full(exc):
                raise space.disk_full(directory, self.root, exc) from exc
            raise
        return directory

    def read_named(self, table: str, name: str, partition: Mapping[str, str] | None = None) -> pa.Table | None:
        """The rows ``write(table, …, name=name, partition=partition)`` stored last, None when there are none: its
        file in a folder lake, its rows in a Delta table."""
        if (delta := self.delta(table)) is not None:
            return delta.read_named(table, name, partition)
        directory = self.table_dir(table)
        for key, value in (partition or {}).items():
            directory = directory / f"{key}={safe_name(value)}"
        try:
            return pq.read_table(directory / name)
        except FileNotFoundError:
            return None

    def own_folders(self) -> list[Path]:
        """The folders the lake's writers write in: each table of its layout, and ``WORK``. Only these are swept at
        a run's start (``clean_temp_files``): never the lake's ``raw`` or ``reports``, nor anything else in its
        folder, whose files no lake writer made."""
        return [self.table_dir(name) for name in dict.fromkeys([*self.layout.tables, WORK])]

    def clean_temp_files(self) -> int:
        """Finish or undo writers killed before their rename; returns how many temp files it handled. Only the
        lake's own folders (``own_folders``) are looked in, and only names the lake's writers give are touched: a
        data file's temp (``manifest.temp_name``) and a record's (``manifest.record_temp_name``). A temp file its
        record names (killed between the two renames) is renamed into place: it was committed. Any other such temp
        file was never committed (its writer was killed before its record) and is removed, and so is one that is a
        link (the link, never what it points at). A file named otherwise (``notes.parquet.tmp``) is not the lake's:
        it stays. Call it only when no other process writes the lake (a run's start)."""
        handled = 0
        for folder in self.own_folders():
            for tmp in sorted(links.walk(folder)):
                if manifest.is_record_temp(tmp.name):
                    tmp.unlink(missing_ok=True)
                    handled += 1
                elif (final_name := manifest.final_name(tmp.name)) is not None:
                    self._finish(tmp, tmp.with_name(final_name))
                    handled += 1
        return handled

    @staticmethod
    def _finish(tmp: Path, final: Path) -> None:
        """Rename ``tmp`` over ``final`` when ``final``'s record names it and it is the size recorded; else remove
        it (a link is removed, never followed)."""
        record = manifest.of(final)
        st = tmp.lstat()
        if record is not None and record.tmp == tmp.name and stat.S_ISREG(st.st_mode) and st.st_size == record.size:
            os.replace(tmp, final)
            log.info("finished the interrupted write of %s", final)
            return
        if not stat.S_ISREG(st.st_mode):
            log.warning("removed %s: a temp file of the lake that is not a regular file (a link is removed, never "
                        "followed)", tmp)
        tmp.unlink(missing_ok=True)

    def connect(self) -> duckdb.DuckDBPyConnection:
        return duckdb.connect()

    def relation_sql(self, table: str, schema: pa.Schema | None = None) -> str:
        """A SQL expression for the table: its files, or a typed empty relation when it has none.
        With a ``schema``, columns the files lack (appended to the schema after they were written)
        are there too, as nulls, so queries may name every column of the current schema."""
        good, clean = self.readable(table)
        paths = self.path_sql(self.glob(table)) if clean else "[" + ", ".join(self.path_sql(p) for p in good) + "]"
        files = f"read_parquet({paths}, union_by_name=true, hive_partitioning=false)"
        if good and self.delta(table) is not None:
            from dialogbench.lake.delta.tables import NAME_COLUMN
            files = f"(SELECT * EXCLUDE (\"{NAME_COLUMN}\") FROM {files})"
        if schema is None:
            if good:
                return files
            raise FileNotFoundError(f"lake table {table!r} has no readable files under {self.table_dir(table)}")
        if good:  # exact types, so the files' column types are kept
            exact = ", ".join(f"CAST(NULL AS {_duck_type(f.type, exact=True)}) AS \"{f.name}\"" for f in schema)
            return f"(SELECT * FROM {files} UNION ALL BY NAME SELECT {exact} WHERE false)"
        cols = ", ".join(f"CAST(NULL AS {_duck_type(f.type)}) AS \"{f.name}\"" for f in schema)
        return f"(SELECT {cols} WHERE false)"

    def path_sql(self, path: str | os.PathLike) -> str:
        """``path`` (a file or glob under the lake) as a SQL string expression: the one place paths are written into
        SQL. A quoted literal as given (absolute, or relative to the working directory), or with ``root_sql`` set,
        that expression followed by the path inside the lake."""
        if self.root_sql is None:
            return _quote(str(path))
        return f"{self.root_sql} || {_quote(Path(path).relative_to(self.root).as_posix())}"

    def read(self, table: str, schema: pa.Schema | None = None, where: str = "") -> pa.Table:
        with self.connect() as con:
            sql = f"SELECT * FROM {self.relation_sql(table, schema)} {('WHERE ' + where) if where else ''}"
            return con.sql(sql).to_arrow_table()


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def fsync_path(path: Path) -> None:
    """Flush ``path`` to disk: a file's data, or a folder's entries (so a rename into it survives a crash)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _duck_type(arrow_type: pa.DataType, exact: bool = False) -> str:
    """The DuckDB type for an Arrow type; integers are BIGINT unless ``exact`` (then by width)."""
    if pa.types.is_list(arrow_type):
        return _duck_type(arrow_type.value_type, exact) + "[]"
    if pa.types.is_map(arrow_type):
        return f"MAP({_duck_type(arrow_type.key_type, exact)}, {_duck_type(arrow_type.item_type, exact)})"
    if pa.types.is_struct(arrow_type):
        fields = ", ".join(f'"{f.name}" {_duck_type(f.type, exact)}' for f in arrow_type)
        return f"STRUCT({fields})"
    if pa.types.is_string(arrow_type):
        return "VARCHAR"
    if pa.types.is_boolean(arrow_type):
        return "BOOLEAN"
    if pa.types.is_integer(arrow_type):
        return {8: "TINYINT", 16: "SMALLINT", 32: "INTEGER"}.get(arrow_type.bit_width, "BIGINT") if exact else "BIGINT"
    if pa.types.is_floating(arrow_type):
        return "DOUBLE"
    if pa.types.is_timestamp(arrow_type):
        return "TIMESTAMP WITH TIME ZONE" if arrow_type.tz else "TIMESTAMP"
    raise TypeError(f"no DuckDB type for {arrow_type}")
