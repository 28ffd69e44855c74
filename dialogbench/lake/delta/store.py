"""A cell store on Delta Lake tables (delta-rs): each cell once, whoever writes it, with no lease.

Each table is a Delta table at ``<location>/<table>``. A write is one Delta commit: its Parquet files are written
first, under fresh names no reader lists, and become part of the table only when the commit file
``_delta_log/<version>.json`` is created, which happens once (a conditional put: ``location``). A reader loads a
version's log and reads exactly that version's files, so a killed writer leaves, at worst, unreferenced files that
``vacuum`` removes, and never a partial table.

``insert_missing`` is what makes a cell unique without a lease: a MERGE on the cell's key columns whose only action is
"insert when not matched". Two writers that race on the same keys both read the table, both find the key missing and
both try to commit; the second commit's conflict check sees that a concurrent commit added files its MERGE should have
read (delta-rs: "a concurrent transaction added new data") and fails as a whole. The store then runs the MERGE again on
the new version, where the key is found and nothing is inserted. The retries are bounded (``max_attempts``, with a
jittered back-off); a write that exhausts them raises ``CommitConflict`` having committed nothing, so calling it again
is safe. ``tests/lake/delta/test_concurrency.py`` races four processes on overlapping keys, on a folder and on S3.

What this module does not do yet (``docs/lake-format.md``): the pipeline does not write through it; ``migrate.py``
copies an existing folder lake into it."""

from __future__ import annotations

import math
import os
import random
import threading
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TypeVar

import pyarrow as pa
import pyarrow.fs as pafs
from deltalake import CommitProperties, DeltaTable, Field, QueryBuilder, write_deltalake
from deltalake.exceptions import CommitFailedError, TableNotFoundError
from deltalake.fs import DeltaStorageHandler

from dialogbench.lake.delta.errors import CommitConflict, DeltaStoreError, TableNotFound
from dialogbench.lake.delta.keys import check_keys, merge_predicate, quote, unique_on
from dialogbench.lake.delta.location import Location, StorageOptions, check_table_name

MAX_ATTEMPTS = 25  # MERGEs of one insert_missing; 4 writers on overlapping keys need a few each
_T = TypeVar("_T")


class DeltaCellStore:
    """Delta tables of cells under one location (a folder or ``s3://bucket/prefix``; ``location.py``).

    ``storage_options`` override what is read from the environment (S3 credentials, endpoint, …); the store keeps
    them masked in its repr. ``writer`` is recorded in each commit's metadata (``dialogbench.writer`` in ``history``),
    so a table's history says which run or process committed what. ``environ`` replaces ``os.environ`` (tests)."""

    def __init__(self, location: "str | os.PathLike[str] | Location", *,
                 storage_options: Mapping[str, str] | None = None, writer: str | None = None,
                 max_attempts: int = MAX_ATTEMPTS, environ: Mapping[str, str] | None = None) -> None:
        self.location = Location.parse(location)
        self.options: StorageOptions = self.location.storage_options(overrides=storage_options, environ=environ)
        self.writer = writer
        if max_attempts < 1:
            raise ValueError("max_attempts: at least 1")
        self.max_attempts = max_attempts
        self._last = threading.local()  # last_commit(), per thread: a run's chunks commit from several threads
        self.conflicts = 0  # commits of this store lost to a concurrent writer and run again (a gauge of contention)

    def __repr__(self) -> str:
        return f"DeltaCellStore({str(self.location)!r})"

    # ---------------------------------------------------------------------------------------------- writes

    def insert_missing(self, table: str, data: pa.Table, *, keys: Sequence[str],
                       partition_by: Sequence[str] | None = None, unique: bool = True,
                       stored: str | None = None) -> int:
        """Insert the rows of ``data`` whose key (``keys``, the cell's key columns) the table does not hold yet;
        returns how many were inserted. A key is stored once, whatever other writers do at the same time, in any
        partition: a conflicting concurrent commit makes the MERGE run again (``max_attempts``), then
        ``CommitConflict``. A null in a key column is refused; a key repeated in ``data`` keeps its first row, unless
        ``unique`` is False: then a cell of several rows (an utterance's lengths) is inserted whole, every row of a
        key the table lacks. ``stored``: a further condition a stored row must meet to count as holding its key,
        on the stored row's columns prefixed ``t.`` (a game that ended in backend errors holds no cell, so its
        replay is inserted). The first write creates the table with ``data``'s schema, partitioned by
        ``partition_by`` (columns of ``data``; put them in ``keys`` too, so a MERGE reads only the partitions it
        writes)."""
        where = self._where(table)
        keys = check_keys(data, keys, where=where)
        dt, source = self._ensure(table, unique_on(data, keys) if unique else data, partition_by)
        if source.num_rows == 0:
            return 0
        predicate = merge_predicate(keys) + (f" AND ({stored})" if stored else "")

        def merge(dt: DeltaTable) -> int:
            merger = dt.merge(source, predicate, source_alias="s", target_alias="t", streamed_exec=False,
                              commit_properties=self._commit_properties())
            return int(merger.when_not_matched_insert_all().execute()["num_target_rows_inserted"])

        return self._retrying(table, "insert_missing", merge, dt)

    def append(self, table: str, data: pa.Table, *, partition_by: Sequence[str] | None = None) -> int:
        """Append every row of ``data`` (no key check: rows that are not cells, such as logs); returns the rows
        appended. A blind append never conflicts with another writer's commit; delta-rs retries it at the next
        version. The first write creates the table, as ``insert_missing``."""
        dt, data = self._ensure(table, data, partition_by)
        if data.num_rows == 0:
            return 0

        def write(dt: DeltaTable) -> int:
            write_deltalake(dt, data, mode="append", commit_properties=self._commit_properties())
            return data.num_rows

        return self._retrying(table, "append", write, dt)

    def replace(self, table: str, data: pa.Table, *, where: str) -> int:
        """Delete the rows where ``where`` holds (a SQL condition on the table's columns) and append ``data``, as one
        commit: a reader sees the old rows or the new ones, never neither. Returns the rows written. The first write
        creates the table, as ``insert_missing``."""
        dt, data = self._ensure(table, data, None)

        def write(dt: DeltaTable) -> int:
            write_deltalake(dt, data, mode="overwrite", predicate=where, commit_properties=self._commit_properties())
            return data.num_rows

        return self._retrying(table, "replace", write, dt)

    def remove_missing(self, table: str) -> list[str]:
        """Drop from the latest version the files it names that are not on the store (delta-rs' FSCK): what a table
        whose damaged file was moved aside needs, so its other rows read again and the lost rows' cells are missing
        (and computed again). Returns the files dropped."""
        def fsck(dt: DeltaTable) -> list[str]:
            metrics = dt.repair(commit_properties=self._commit_properties())
            return [str(path) for path in (metrics or {}).get("files_removed", [])]

        return self._retrying(table, "remove_missing", fsck)

    def added(self, table: str, *, version: int | None = None) -> list[dict[str, Any]]:
        """The files of ``version`` (default: the latest) as its log records them: ``path`` (inside the table),
        ``size_bytes`` and ``num_records`` (None when the writer recorded no statistics)."""
        return self.versioned_added(table, version=version)[1]

    def versioned_added(self, table: str, *,
                        version: int | None = None) -> tuple[int, list[dict[str, Any]]]:
        """``added``, with the version it lists."""
        dt = self._open(table, version=version)
        try:
            actions = pa.table(dt.get_add_actions(flatten=True))
        except Exception as exc:  # noqa: BLE001
            raise self._failed(table, "list files", exc) from None
        names = [name for name in ("path", "size_bytes", "num_records") if name in actions.column_names]
        return dt.version(), [{"num_records": None, **row} for row in actions.select(names).to_pylist()]

    def compact(self, table: str, *, target_size: int | None = None) -> dict[str, Any]:
        """Rewrite the latest version's small files into fewer large ones (delta-rs ``optimize.compact``); returns
        its metrics (``numFilesAdded``, ``numFilesRemoved``, …). The rows do not change, and a reader of an older
        version still reads its own files until ``vacuum`` removes them. A MERGE racing it runs again."""
        return self._retrying(table, "compact", lambda dt: dict(dt.optimize.compact(
            target_size=target_size, commit_properties=self._commit_properties())))

    def vacuum(self, table: str, *, retention_hours: float, full: bool = False, dry_run: bool = False) -> list[str]:
        """Delete the files older than ``retention_hours`` that the latest version does not reference: the ones
        ``compact`` or a rewrite replaced and, with ``full``, also those no version ever referenced (a writer killed
        before its commit), found by listing the whole table (slower on an object store). Returns them (only lists
        them with ``dry_run``; a later vacuum may list again files an earlier one deleted, as long as the log still
        holds their removal). delta-rs counts whole hours, so the retention is rounded up. Two things a short
        retention breaks, which is why Delta's default is 7 days: a reader still on an older version loses its files,
        and so does a writer that has written its files but not yet committed them (its commit then names files that
        are gone). Keep the retention above the longest read and the longest write (a night's run); 0 only when no
        one else uses the table (the tests). Delta's own floor is not enforced here: the caller chooses. The files are
        named as ``files`` names them (absolute paths, or ``s3://`` URIs)."""
        if retention_hours < 0 or math.isnan(retention_hours):
            raise ValueError(f"{self._where(table)}: retention_hours must be 0 or more")
        dt = self._open(table)
        try:
            removed = dt.vacuum(retention_hours=math.ceil(retention_hours), dry_run=dry_run, full=full,
                                enforce_retention_duration=False, commit_properties=self._commit_properties())
        except Exception as exc:  # noqa: BLE001 - every delta-rs failure becomes one error naming the table
            raise self._failed(table, "vacuum", exc) from None
        root = self._where(table)  # delta-rs names them inside the table; as files() does, in full
        return [path if "://" in path or path.startswith("/") else f"{root}/{path}" for path in removed]

    # ---------------------------------------------------------------------------------------------- reads

    def read(self, table: str, *, version: int | None = None, columns: Sequence[str] | None = None,
             filter: str | None = None) -> pa.Table:
        """The table's rows at ``version`` (default: the latest), only ``columns`` when given, and only rows where
        ``filter`` holds: a SQL condition on the table's columns (DataFusion's dialect, names in double quotes:
        ``'"k" >= 3 AND "model" = 'm0''``), pushed down to the files. A version is immutable: reading it again after
        later writes gives the same rows (until ``vacuum`` removes its files). The columns have the table's types.

        Read through delta-rs' own engine (DataFusion) rather than ``DeltaTable.to_pyarrow_table``: that one reads
        through a file system written in Python (``deltalake.fs``) from pyarrow's threads, and a process that used it
        aborts at exit now and then ("terminate called without an active exception", about one run in four in a
        small script here; delta-rs issue 2184), which would fail a run that succeeded."""
        dt = self._open(table, version=version)
        try:
            schema = pa.schema(dt.schema().to_arrow())
            names = list(schema.names if columns is None else columns)
            missing = [name for name in names if name not in schema.names]
            if missing or not names:
                raise ValueError(f"no such column: {missing}" if missing else "no column asked for")
            sql = f"SELECT {', '.join(quote(name) for name in names)} FROM t" + (f" WHERE {filter}" if filter else "")
            rows = pa.table(QueryBuilder().register("t", dt).execute(sql))
            return rows.cast(pa.schema([schema.field(name) for name in names]))  # DataFusion gives string_view
        except Exception as exc:  # noqa: BLE001
            raise self._failed(table, "read", exc) from None

    def version(self, table: str) -> int | None:
        """The table's latest committed version, or None when it has none."""
        try:
            return self._open(table).version()
        except TableNotFound:
            return None

    def snapshot(self) -> dict[str, int]:
        """Every table's latest version. Pass each to ``read``/``files`` (``version=snap[table]``) to read the lake as
        it was, whatever is committed meanwhile: each table's version is read at a slightly different moment, but each
        is a whole commit, so a reader sees every table as of some commit, never a part of one."""
        found = {}
        for table in self.tables():
            if (version := self.version(table)) is not None:
                found[table] = version
        return found

    def files(self, table: str, *, version: int | None = None) -> list[str]:
        """The Parquet files of ``version`` (default: the latest): absolute paths for a folder, ``s3://`` URIs for
        S3. What a DuckDB view over a consistent snapshot reads: ``read_parquet([...], hive_partitioning = true)``
        (delta-rs keeps partition columns in the folder names, not in the files)."""
        dt = self._open(table, version=version)
        try:
            return list(dt.file_uris())
        except Exception as exc:  # noqa: BLE001
            raise self._failed(table, "files", exc) from None

    def history(self, table: str, *, limit: int | None = None) -> list[dict[str, Any]]:
        """The table's commits, newest first: version, operation (CREATE TABLE, MERGE, WRITE, OPTIMIZE, VACUUM …),
        its metrics, and ``dialogbench.writer`` when the store that wrote it had one."""
        dt = self._open(table)
        try:
            return list(dt.history(limit))
        except Exception as exc:  # noqa: BLE001
            raise self._failed(table, "history", exc) from None

    def tables(self) -> list[str]:
        """The tables under the location: its sub-folders that hold a Delta log (not ``_``- or ``.``-prefixed)."""
        if self.location.kind == "local":
            root = Path(self.location.root)
            if not root.is_dir():
                return []
            return sorted(p.name for p in root.iterdir()
                          if _plain(p.name) and (p / "_delta_log").is_dir() and not p.is_symlink())
        handler = DeltaStorageHandler(self.location.root, self.options.as_dict())  # called here, never by pyarrow
        try:
            found = handler.get_file_info_selector(pafs.FileSelector("", recursive=False, allow_not_found=True))
        except Exception as exc:  # noqa: BLE001
            raise DeltaStoreError(f"{self.location}: listing its tables failed: {self._text(exc)}") from None
        names = [info.base_name for info in found if info.type == pafs.FileType.Directory and _plain(info.base_name)]
        return sorted(name for name in names if DeltaTable.is_deltatable(self.location.table_uri(name),
                                                                         self.options.as_dict()))

    # ---------------------------------------------------------------------------------------------- the machinery

    def _where(self, table: str) -> str:
        return self.location.table_uri(table)

    def _open(self, table: str, *, version: int | None = None) -> DeltaTable:
        uri = self._where(table)
        try:
            return DeltaTable(uri, version=version, storage_options=self.options.as_dict())
        except TableNotFoundError:
            raise TableNotFound(f"{uri}: no Delta table here (nothing was committed to it)") from None
        except Exception as exc:  # noqa: BLE001
            what = f"open at version {version}" if version is not None else "open"
            raise self._failed(table, what, exc) from None

    def _ensure(self, table: str, data: pa.Table,
                partition_by: Sequence[str] | None) -> tuple[DeltaTable, pa.Table]:
        """The table, created empty with ``data``'s schema when it has no log yet, and ``data`` in the table's
        columns. Writers that create it at once all succeed: one commit wins version 0, the others find the table or
        commit an identical CREATE (delta-rs), and no row is written by a creation, so none can be doubled. (Writing
        the first rows with ``mode="error"`` instead would: delta-rs retries a lost version-0 write as an append.)

        A table written by an older dialogbench may lack a column this one writes: the column is added to the table
        (its older rows read it as null), as reading the folder lake's files by name did; a column the table has and
        ``data`` lacks is written as nulls. A column whose type differs is refused (``DeltaStoreError``)."""
        schema = data.schema
        partitions = list(partition_by or [])
        for column in partitions:
            if column not in schema.names:
                raise ValueError(f"{self._where(table)}: partition column {column!r} is not a column of the data")
        try:
            dt = self._open(table)
        except TableNotFound:
            try:
                DeltaTable.create(self._where(table), schema, mode="ignore", partition_by=partitions or None,
                                  storage_options=self.options.as_dict(),
                                  commit_properties=self._commit_properties())
            except CommitFailedError:
                pass  # another writer created it between our look and our commit: it is there now
            except Exception as exc:  # noqa: BLE001
                raise self._failed(table, "create", exc) from None
            dt = self._open(table)
        if partition_by is not None and list(dt.metadata().partition_columns) != partitions:
            raise DeltaStoreError(f"{self._where(table)}: partitioned by {list(dt.metadata().partition_columns)}, "
                                  f"not {partitions}")
        stored = [field.name for field in dt.schema().fields]
        if extra := [field for field in schema if field.name not in stored]:
            dt = self._add_columns(table, dt, extra)
        return dt, self._conform(table, dt, data)

    def _add_columns(self, table: str, dt: DeltaTable, fields: list[pa.Field]) -> DeltaTable:
        """Add ``fields`` (nullable) to the table; a writer that added them first makes this a no-op."""
        try:
            dt.alter.add_columns([Field.from_arrow(field.with_nullable(True)) for field in fields],
                                 commit_properties=self._commit_properties())
        except CommitFailedError:
            pass  # another writer changed the table at the same time: the columns are read again below
        except Exception as exc:  # noqa: BLE001
            names = [field.name for field in fields]
            dt = self._open(table)
            if not all(name in [f.name for f in dt.schema().fields] for name in names):
                raise self._failed(table, f"add the column(s) {names}", exc) from None
        dt = self._open(table)
        missing = [f.name for f in fields if f.name not in [g.name for g in dt.schema().fields]]
        if missing:
            raise DeltaStoreError(f"{self._where(table)}: the column(s) {missing} could not be added to the table")
        return dt

    def _conform(self, table: str, dt: DeltaTable, data: pa.Table) -> pa.Table:
        """``data`` with the table's columns in the table's order: one it lacks is nulls of the table's type."""
        want = pa.schema(dt.schema().to_arrow())
        if want.names == data.schema.names:
            return data
        return pa.table([data.column(field.name) if field.name in data.schema.names
                         else pa.nulls(data.num_rows, type=field.type) for field in want], names=want.names)

    def _retrying(self, table: str, action: str, operation: Callable[[DeltaTable], _T],
                  dt: DeltaTable | None = None) -> _T:
        """``operation`` on the latest version (``dt``, else loaded), again on the next latest after each commit
        conflict, at most ``max_attempts`` times, with a jittered exponential back-off so racing writers spread out."""
        self._last.commit = None
        dt = dt if dt is not None else self._open(table)
        for attempt in range(1, self.max_attempts + 1):
            try:
                read = dt.version()
                result = operation(dt)
                self._last.commit = (table, read, dt.version())
                return result
            except CommitFailedError as exc:
                last = self._text(exc)
                self.conflicts += 1
            except Exception as exc:  # noqa: BLE001
                raise self._failed(table, action, exc) from None
            time.sleep(random.uniform(0, min(1.0, 0.01 * 2 ** attempt)))
            try:
                dt.update_incremental()
            except Exception as exc:  # noqa: BLE001
                raise self._failed(table, f"{action} (reloading after a conflict)", exc) from None
        raise CommitConflict(f"{self._where(table)}: {action} lost to concurrent writers {self.max_attempts} times "
                             f"and committed nothing; the last conflict: {last}")

    def last_commit(self) -> tuple[str, int, int] | None:
        """What this thread's last write, compaction or repair did: ``(table, the version it read, the version the
        table is at after it)``; the versions between them (the second included) are its commit and any a concurrent
        writer made meanwhile. None before any, or after one that failed."""
        return getattr(self._last, "commit", None)

    def _commit_properties(self) -> CommitProperties | None:
        return CommitProperties(custom_metadata={"dialogbench.writer": self.writer}) if self.writer else None

    def _text(self, exc: BaseException) -> str:
        return self.options.scrub(f"{type(exc).__name__}: {exc}".strip())

    def _failed(self, table: str, action: str, exc: BaseException) -> DeltaStoreError:
        return DeltaStoreError(f"{self._where(table)}: {action} failed: {self._text(exc)}")


def _plain(name: str) -> bool:
    try:
        check_table_name(name)
    except ValueError:
        return False
    return True
