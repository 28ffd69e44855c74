"""A lake's tables as Delta tables: what ``Lake`` does when its marker says ``"tables": "delta"``.

Each table of the lake's layout is a Delta table in the table's own folder (``<lake>/<table>/_delta_log``), not
partitioned: its Parquet files hold every column, partition columns included, so DuckDB reads a version's files
directly (``Lake.relation_sql``) and the catalog's views keep working. One extra column, ``lake_file``, holds the
name a write gave its rows (``Lake.write(name=…)``: a run's row per stage, a dataset's seeds, a source's labels) as
the path a folder lake would give that file (``run_id=…/generate.parquet``), null otherwise; a named write replaces
the rows of that name, in one commit, as a named file replaces its namesake in a folder lake. Readers never see the
column (``NAME_COLUMN`` is excluded from every relation).

How each write commits (``write``):
- a cell table (``Table.done`` set, cells not ``repeated``): ``DeltaCellStore.insert_missing`` on the table's key,
  so a cell is stored once however many writers race (dispatched units, two runs), with no lease or token needed for
  that; the rows of a cell stored already are dropped. A table whose ``done`` is a condition (a game that ended in
  backend errors is a row, not a cell) names the same condition on the stored row (``Table.done_stored``);
- a named write: ``DeltaCellStore.replace`` of its name's rows;
- every other table (runs, plans, failures, backend calls, the judge canary's history): an append.
"""

from __future__ import annotations

import copy
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import pyarrow as pa
import pyarrow.parquet as pq

from dialogbench.lake.delta import checksums
from dialogbench.lake.delta.errors import TableNotFound
from dialogbench.lake.delta.keys import quote
from dialogbench.lake.delta.mirror import fetch, is_store_uri
from dialogbench.lake.delta.store import DeltaCellStore
from dialogbench.lake.health import Damaged, Snapshot
from dialogbench.lake.manifest import Record, sha256
from dialogbench.lake.names import safe_name

NAME_COLUMN = "lake_file"  # the name a write gave its rows (Lake.write(name=...)), null otherwise; never read


@dataclass(frozen=True)
class Added:
    """A file a table's latest version names: its path, and its size and rows as the log records them."""

    path: Path
    size: int
    rows: int | None


class DeltaTables:
    """The Delta tables of the lake at ``root`` (a folder): in it, or at ``store`` (``s3://…``; ``root`` is then the
    lake's local mirror: ``lake.delta.mirror``). ``writer`` is recorded in each commit."""

    def __init__(self, root: str | os.PathLike, *, store: str | None = None, writer: str | None = None) -> None:
        self.root = Path(root)
        self.remote = is_store_uri(store)
        self.store = DeltaCellStore(store if self.remote else self.root.absolute(), writer=writer)
        self._pinned: dict[str, list[Added]] = {}
        self._kept: dict[str, tuple[int, tuple[Added, ...]]] = {}  # a local table's latest files, by version

    def pinned(self, tables) -> "DeltaTables":
        """A copy that answers ``added`` for each of ``tables`` from its latest file list taken now (fetching what a
        store's mirror lacks): what a process makes before it forks a reader (``lake.query``'s confined child), which
        must not call delta-rs (its runtime does not survive a fork) and may write no file. This object is left as it
        is, so its later reads see later commits, and threads that each take their own copy share nothing."""
        pinned = copy.copy(self)
        pinned._pinned = {table: self._latest(table) for table in tables}
        return pinned

    def write(self, table: str, data: pa.Table, *, spec: Any = None, partition: Mapping[str, str] | None = None,
              name: str | None = None) -> int:
        """Commit ``data`` to ``table`` (see the module); ``spec``: its ``cells.Table``, when the layout has it. On a
        lake in its own folder, the files the commit added are then hashed (``checksums``)."""
        written = self._write(table, data, spec=spec, partition=partition, name=name)
        self._vouch(table)
        return written

    def append(self, table: str, data: pa.Table) -> int:
        """``DeltaCellStore.append`` of ``data`` as it is (a converted table's rows, ``NAME_COLUMN`` included), its
        files hashed as a write's are; returns the rows appended."""
        appended = self.store.append(table, data)
        self._vouch(table)
        return appended

    def compact(self, table: str) -> dict[str, Any]:
        """``DeltaCellStore.compact`` of ``table``, its new files hashed as a write's are; returns its metrics."""
        metrics = self.store.compact(table)
        self._vouch(table)
        return metrics

    def vacuum(self, table: str, *, retention_hours: float, dry_run: bool = False) -> tuple[list[str], list[Path]]:
        """``DeltaCellStore.vacuum`` of ``table`` (``full``: a killed writer's files too), then, unless ``dry_run``,
        the local copies no version names (``prune_mirror``); returns both."""
        removed = self.store.vacuum(table, retention_hours=retention_hours, full=True, dry_run=dry_run)
        return removed, ([] if dry_run else self.prune_mirror(table))

    def _vouch(self, table: str) -> None:
        """Hash the files this thread's last commit to ``table`` added (a local lake's: ``checksums``), and those of
        any commit another writer made between the version it read and its own."""
        commit = self.store.last_commit()
        if self.remote or commit is None or commit[0] != table or commit[2] == commit[1]:
            return
        checksums.record(self.root / table, commit[1] + 1, commit[2])

    def _write(self, table: str, data: pa.Table, *, spec: Any, partition: Mapping[str, str] | None,
               name: str | None) -> int:
        named = None if name is None else named_path(name, partition)
        if NAME_COLUMN in data.schema.names:  # rows read from a table's own files: their name is this write's
            data = data.drop_columns([NAME_COLUMN])
        data = data.append_column(pa.field(NAME_COLUMN, pa.string()), pa.array([named] * data.num_rows, pa.string()))
        if named is not None:
            return self.store.replace(table, data, where=f"{quote(NAME_COLUMN)} = {literal(named)}")
        if data.num_rows == 0:
            return 0
        if spec is not None and spec.done is not None and not spec.repeated:
            stored = None if spec.done == "true" else spec.done_stored
            if stored is None and spec.done != "true":
                raise ValueError(f"{self.root / table}: its cells are rows where {spec.done}: name the same condition "
                                 "on the stored row (Table.done_stored), so a Delta lake can store each cell once")
            return self.store.insert_missing(table, data, keys=[spec.key], unique=False, stored=stored)
        return self.store.append(table, data)

    def added(self, table: str) -> list[Added]:
        """The files of the table's latest version ([] when it has none), in the order the log lists them (as
        pinned, for a table ``pin`` took)."""
        if table in self._pinned:
            return self._pinned[table]
        return self._latest(table)

    def _latest(self, table: str) -> list[Added]:
        """The latest version's files. On a lake in its own folder, a table's list is kept with its version and used
        again while the log has no next version (``_delta_log/<version + 1>.json``, which a commit creates at once
        and whole): a run reads its tables hundreds of times between two commits, and loading the log each time was
        most of what a Delta lake cost it."""
        log = self.root / table / "_delta_log"
        if not self.remote and (kept := self._kept.get(table)) is not None \
                and not (log / f"{kept[0] + 1:020d}.json").exists():
            return list(kept[1])
        try:
            version, found = self.store.versioned_added(table)
        except TableNotFound:
            return []
        directory = self.root / table
        added = [Added(directory / row["path"], int(row["size_bytes"]),
                       None if row["num_records"] is None else int(row["num_records"])) for row in found]
        if self.remote:  # read from the mirror: what it lacks is fetched first
            for row, file in zip(found, added):
                fetch(self.store, table, row["path"], file.path, file.size)
        else:
            self._kept[table] = (version, tuple(added))
        return added

    def prune_mirror(self, table: str) -> list[Path]:
        """On a store's mirror: delete the local copies the table's latest version no longer names (a compaction or
        vacuum replaced them); returns them. Nothing on a local lake (its folder is the table)."""
        if not self.remote:
            return []
        keep = {file.path for file in self.added(table)}
        gone = [path for path in sorted((self.root / table).rglob("*.parquet")) if path not in keep]
        for path in gone:
            path.unlink(missing_ok=True)
        return gone

    def files(self, table: str) -> list[Path]:
        return sorted(added.path for added in self.added(table))

    def snapshot(self, table: str, level: str = "stat") -> Snapshot:
        """The latest version's files checked at ``level`` against the log (``lake.health``'s levels): ``stat`` the
        size, ``footer`` also the Parquet footer's row count, ``full`` also the sha256 its writer recorded
        (``checksums``), or, for a file with none (a lake on S3, a writer killed before it hashed), every page read
        back, which does not see a flipped bit that still decodes. Files no version names (an older version's, a
        killed writer's) are not the table's rows: ``vacuum`` removes them; they are not listed here."""
        snap = Snapshot()
        sums = checksums.recorded(self.root / table) if level == "full" and not self.remote else {}
        for added in self.added(table):
            digest = sums.get(added.path.relative_to(self.root / table).as_posix())
            problem, st = _check(table, added, level, digest)
            if problem is not None:
                snap.damaged.append(problem)
                continue
            snap.good.append(added.path)
            snap.records[added.path] = Record(file=added.path.name, table=table, rows=added.rows or 0,
                                              size=added.size, sha256=digest or "", mtime_ns=st.st_mtime_ns)
        snap.good.sort()
        return snap

    def forget(self, table: str) -> list[str]:
        """Drop from the table's latest version the files no longer on disk (quarantined): their cells are missing
        then, and the next run computes them again. Returns the files dropped."""
        return self.store.remove_missing(table)

    def read_named(self, table: str, name: str, partition: Mapping[str, str] | None = None) -> pa.Table | None:
        """The rows a named write stored under ``name`` in ``partition``, without ``NAME_COLUMN``; None when none."""
        where = f"{quote(NAME_COLUMN)} = {literal(named_path(name, partition))}"
        try:
            rows = self.store.read(table, filter=where)
        except TableNotFound:
            return None
        return rows.drop_columns([NAME_COLUMN]) if rows.num_rows else None


def _check(table: str, added: Added, level: str,
           digest: str | None = None) -> tuple[Damaged | None, os.stat_result | None]:
    """``added`` on disk against the log at ``level`` (and, at ``full``, against ``digest``, the sha256 its writer
    recorded, when there is one): its damage (None when it holds) and its stat."""
    try:
        st = os.lstat(added.path)
    except FileNotFoundError:
        return Damaged(table, added.path, "missing", "the table's log names it, the file is not there"), None
    if not stat.S_ISREG(st.st_mode):
        return Damaged(table, added.path, "not a file", "not a regular file (a link is never followed)"), st
    if st.st_size != added.size:
        problem = "truncated" if st.st_size < added.size else "altered"
        return Damaged(table, added.path, problem, f"{st.st_size} bytes, committed {added.size}"), st
    if level == "full" and digest is not None:
        if sha256(added.path) != digest:
            return Damaged(table, added.path, "altered", "sha256 differs from the committed file's"), st
        return None, st  # the very bytes its writer committed
    if level in ("footer", "full"):
        try:
            rows = pq.read_metadata(added.path).num_rows
            if level == "full":
                pq.read_table(added.path)
        except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a broken file
            return Damaged(table, added.path, "unreadable", f"{type(exc).__name__}: {exc}"), st
        if added.rows is not None and rows != added.rows:
            return Damaged(table, added.path, "altered", f"{rows} rows in its footer, committed {added.rows}"), st
    return None, st


def named_path(name: str, partition: Mapping[str, str] | None) -> str:
    """Where a folder lake would put the file ``name`` of ``partition`` inside its table (``key=value/…/name``):
    what ``NAME_COLUMN`` holds, so a named write replaces exactly what the same write replaces in a folder lake,
    whether or not the partition's values are columns of the rows (the seeds' dataset is not)."""
    return "/".join([*(f"{key}={safe_name(value)}" for key, value in (partition or {}).items()), name])


def literal(value: Any) -> str:
    """``value`` as a SQL string literal."""
    return "'" + str(value).replace("'", "''") + "'"
