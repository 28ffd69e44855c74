"""A lake read through files opened once: what the ad-hoc query path reads, on a connection with no file access.

``PinnedLake.relation_sql`` opens each table's committed files (those ``Lake.readable`` lets through), hands them to
DuckDB as one Arrow dataset registered on the connection (``pyarrow.dataset``: DuckDB pushes column projections and
filters into its scan) and returns the dataset's name. No file path is written into SQL, so the connection needs no
file system at all (``lake.query`` turns it off). And a file that the lake's writers remove or move once it is open
(``repair`` replacing it, a run's start quarantining it) stays readable through its open handle: a query reads the
files as they were when its views were built, never a half-rewritten lake.

A file listed as committed may vanish (or be replaced) before it is opened: the table is listed again, keeping the
files already open (``PinnedLake._pin``); after ``PIN_TRIES`` listings ``LakeChanged`` says so, and the caller may
build the views again."""

from __future__ import annotations

import errno
import os
import resource
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds

from dialogbench.lake import health
from dialogbench.lake.manifest import Record
from dialogbench.lake.store import Lake

PARQUET = ds.ParquetFileFormat()
PIN_TRIES = 20  # listings of one table while its files are being rewritten
SPARE_FILES = 64  # descriptors left for everything else (DuckDB, Python, the output)


class LakeChanged(RuntimeError):
    """A committed file vanished or changed between the listing and its opening (a rewrite ran meanwhile)."""


class TooManyFiles(RuntimeError):
    """The lake has more committed files than this process may keep open (``ulimit -n``)."""


class PinnedLake(Lake):
    """The lake ``lake`` whose tables are datasets of open files registered on ``con`` (built once per table: this
    lake is pinned by construction). ``close()`` closes the files once the connection is done."""

    def __init__(self, lake: Lake, con: duckdb.DuckDBPyConnection) -> None:
        super().__init__(lake.root, layout=lake.layout, tables=lake.tables_kind())
        self._store, self._delta = lake.store(), lake._delta  # a Delta lake's tables as pinned before a fork
        self._readable = {}
        self.con = con
        self.handles: list[pa.NativeFile] = []
        self.records: dict[Path, Record] = {}
        self.registered: dict[str, str] = {}

    def pinned(self) -> "PinnedLake":
        return self

    def snapshot(self, table: str, level: str = "stat") -> health.Snapshot:
        snap = super().snapshot(table, level)
        self.records.update(snap.records)  # the committed size each opened file must have
        return snap

    def relation_sql(self, table: str, schema: pa.Schema | None = None) -> str:
        """The name of ``table``'s dataset on the connection (a typed empty relation when it has no file)."""
        if table not in self.registered:
            handles = self._pin(table)
            if not handles:
                return super().relation_sql(table, schema)  # no file: a typed empty relation, no path in it
            fragments = [PARQUET.make_fragment(handle) for handle in handles]
            if schema is None:
                schema = pa.unify_schemas([fragment.physical_schema for fragment in fragments])
                if self.delta(table) is not None:  # never read: the name a write gave its rows (lake.delta.tables)
                    from dialogbench.lake.delta.tables import NAME_COLUMN
                    schema = schema.remove(schema.get_field_index(NAME_COLUMN))
            name = f"lake_{table}"
            self.con.register(name, ds.FileSystemDataset(fragments, schema, PARQUET))
            self.registered[table] = name
        return f'"{self.registered[table]}"'

    def _pin(self, table: str) -> list[pa.NativeFile]:
        """An open handle on each of ``table``'s committed files, all of one listing. A file removed between the
        listing and its opening (a rewrite, a quarantine) makes the table be listed again; the files already open
        that are still listed are kept, so only the new ones are opened next time and a busy writer is caught up
        with. ``PIN_TRIES`` listings at most, then ``LakeChanged``."""
        opened: dict[Path, pa.NativeFile] = {}
        for attempt in range(PIN_TRIES):
            self._readable.pop(table, None)  # a fresh listing each time
            good, _ = self.readable(table)
            changed: LakeChanged | None = None
            for path in good:  # every file of the listing that is still there, not only those before a gone one:
                if path in opened:  # a writer working through the files in the same order (repair) is never chased
                    continue
                try:
                    opened[path] = self._open(path)
                except LakeChanged as exc:
                    changed = exc
            if changed is not None:  # listed again: the replacements of the gone files are new, and stay
                time.sleep(0.002 * attempt)
                continue
            for path in opened.keys() - set(good):  # superseded since it was opened
                opened.pop(path).close()
            return [opened[path] for path in good]
        raise changed

    def _open(self, path: Path) -> pa.NativeFile:
        allow_open_files(len(self.handles) + 1)
        try:
            handle = pa.OSFile(str(path), "rb")
        except FileNotFoundError:
            raise LakeChanged(f"{path}: removed after it was listed") from None
        except OSError as exc:
            if exc.errno in (errno.EMFILE, errno.ENFILE):
                raise TooManyFiles(_too_many(len(self.handles) + 1)) from None
            raise
        self.handles.append(handle)
        size = os.fstat(handle.fileno()).st_size
        if size != self.records[path].size:
            raise LakeChanged(f"{path}: {size} bytes when opened, {self.records[path].size} when listed")
        return handle

    def close(self) -> None:
        for handle in self.handles:
            handle.close()
        self.handles.clear()


def allow_open_files(count: int) -> None:
    """Let this process keep ``count`` lake files open: the soft ``RLIMIT_NOFILE`` is raised (up to the hard
    limit) when it is too low; beyond the hard limit, ``TooManyFiles`` says what to raise."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = count + SPARE_FILES
    if needed <= soft or soft == resource.RLIM_INFINITY:
        return
    if hard != resource.RLIM_INFINITY and needed > hard:
        raise TooManyFiles(_too_many(count))
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(needed, 2 * soft)), hard))


def _too_many(count: int) -> str:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return (f"the lake has at least {count} committed files for this query to keep open, and this process may open "
            f"{hard} (ulimit -n); raise the limit (ulimit -n {count + SPARE_FILES * 2}) and query again")
