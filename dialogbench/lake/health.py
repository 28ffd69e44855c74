"""Is each file of a table what the lake committed? Three levels of checking against its record
(``lake.manifest``): ``stat`` (size, and a checksum only when the mtime moved: what every view and stage read
pays, a stat per file), ``footer`` (also the row count in the Parquet footer: every run's start) and ``full``
(the sha256 of every byte: ``dialogbench verify``, the only level that sees a flipped bit whose mtime did not
move). Reading never moves or rewrites anything; ``lake.verify`` quarantines what these checks find.

A table's files are listed without following links (``lake.links.walk``): a data file or record that is a link, or
not a regular file, is damage, and so is a record that is not what this lake writes (``manifest.load``: its field
and why). A record's names become paths only through ``manifest.sibling``, inside the record's own folder."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from dialogbench.lake import links, manifest
from dialogbench.lake.manifest import BadRecord, Record



@dataclass(frozen=True)
class Damaged:
    """A file that is not what the lake committed: ``problem`` is missing, truncated, altered, unreadable,
    unrecorded (a Parquet file without a record), bad record (its record is not one this lake wrote: the field and
    why), link (a symbolic link, never followed) or not a file (a FIFO, a device); ``detail`` says how."""

    table: str
    path: Path
    problem: str
    detail: str = ""

    def line(self, root: Path) -> str:
        return f"{self.table}: {_rel(self.path, root)}: {self.problem}" + (f" ({self.detail})" if self.detail else "")


@dataclass
class Snapshot:
    """A table's files sorted out: ``good`` ones to read, ``damaged`` ones, ``superseded`` ones (replaced by a
    committed rewrite, e.g. an interrupted ``repair``) and ``in_flight`` ones (record written, data being renamed)."""

    good: list[Path] = field(default_factory=list)
    damaged: list[Damaged] = field(default_factory=list)
    superseded: list[Path] = field(default_factory=list)
    in_flight: list[Path] = field(default_factory=list)
    records: dict[Path, Record] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        """Every file on disk is a good committed one (so a glob of the folder reads exactly the good files)."""
        return not (self.damaged or self.superseded or self.in_flight)


def check(path: Path, record: Record, level: str = "stat") -> Damaged | None:
    """``path`` against its record at ``level``; None when it holds."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return Damaged(record.table, path, "missing", "its record exists, the file does not")
    if not stat.S_ISREG(st.st_mode):
        link = stat.S_ISLNK(st.st_mode)
        return Damaged(record.table, path, "link" if link else "not a file",
                       "a symbolic link, never followed" if link else "not a regular file, never read")
    if st.st_size != record.size:
        problem = "truncated" if st.st_size < record.size else "altered"
        return Damaged(record.table, path, problem, f"{st.st_size} bytes, committed {record.size}")
    if level == "full" or st.st_mtime_ns != record.mtime_ns:
        if manifest.sha256(path) != record.sha256:
            return Damaged(record.table, path, "altered", "sha256 differs from the committed file's")
    if level in ("footer", "full"):
        try:
            rows = pq.read_metadata(path).num_rows
        except Exception as exc:  # pyarrow raises several types for a broken footer
            return Damaged(record.table, path, "unreadable", f"{type(exc).__name__}: {exc}")
        if rows != record.rows:
            return Damaged(record.table, path, "altered", f"{rows} rows in its footer, committed {record.rows}")
    return None


def snapshot(directory: Path, table: str, level: str = "stat") -> Snapshot:
    """Every Parquet file and record under ``directory`` (one table's folder), checked at ``level``. Raises
    ``links.LakeLinkError`` for a folder under it that is a link."""
    snap = Snapshot()
    if not directory.is_dir():
        return snap
    listing = links.walk(directory)
    files = {p for p in listing if p.name.endswith(manifest.DATA_SUFFIX)}
    raw = {manifest.data_path(p): p for p in listing if manifest.is_record(p)}
    records: dict[Path, Record] = {}
    bad: dict[Path, str] = {}
    for data, path in raw.items():
        try:
            records[data] = manifest.load(path, table=table)
        except BadRecord as exc:
            bad[data] = f"{path.name}: {exc}"
        except FileNotFoundError:  # removed since the listing (a quarantine): as if never listed
            pass
    plain = {p for p in files if listing[p] == "file"}
    superseded = {manifest.sibling(data, name) for data, rec in records.items() if data in plain
                  and _size(data) == rec.size for name in rec.supersedes}
    for path in sorted(files | raw.keys()):
        record = records.get(path)
        if path in files and listing[path] != "file":
            kind = "link" if listing[path] == "link" else "not a file"
            detail = "a symbolic link, never followed" if kind == "link" else "not a regular file, never read"
            snap.damaged.append(Damaged(table, path, kind, detail))
        elif path in bad:
            snap.damaged.append(Damaged(table, path, "bad record", bad[path]))
        elif path in superseded:
            snap.superseded.append(path)
        elif record is None:
            if path in files:
                snap.damaged.append(Damaged(table, path, "unrecorded", "no record: not committed by this lake"))
        elif record.tmp and os.path.lexists(manifest.sibling(path, record.tmp, "tmp")):  # renamed in a moment
            snap.in_flight.append(path)
        elif (damage := check(path, record, level)) is not None:
            snap.damaged.append(damage)
        else:
            snap.good.append(path)
            snap.records[path] = record
    return snap


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return None


def _rel(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
