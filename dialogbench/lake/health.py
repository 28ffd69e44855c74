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


LOOK = object()  # check(): take the file's stat now


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


def check(path: Path, record: Record, level: str = "stat", *, st=LOOK) -> Damaged | None:
    """``path`` against its record at ``level``; None when it holds. ``st``: the file's stat already taken (None: it
    was missing), as ``snapshot`` observes each file once; by default it is taken here."""
    if st is LOOK:
        st = _stat(path)
    if st is None:
        return Damaged(record.table, path, "missing", "its record exists, the file does not")
    if not stat.S_ISREG(st.st_mode):
        link = stat.S_ISLNK(st.st_mode)
        return Damaged(record.table, path, "link" if link else "not a file",
                       "a symbolic link, never followed" if link else "not a regular file, never read")
    if st.st_size != record.size:
        problem = "truncated" if st.st_size < record.size else "altered"
        return Damaged(record.table, path, problem, f"{st.st_size} bytes, committed {record.size}")
    if level == "full" or st.st_mtime_ns != record.mtime_ns:
        try:
            digest = manifest.sha256(path)
        except FileNotFoundError:
            return Damaged(record.table, path, "missing", "removed while it was checked")
        if digest != record.sha256:
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
    ``links.LakeLinkError`` for a folder under it that is a link.

    Safe while the lake's writers work (a run's writes, ``repair``'s rewrites, a quarantine): ``repair`` writes the
    new file's record, renames the new file into place, then removes the old file and its record, and a snapshot
    holds exactly one of the two. The data files are listed before the records (a record is in place before its
    file, so a listed file's record is found), and each recorded file is observed once, a file that another record
    supersedes before the file that supersedes it: if the new one is seen, the old one is superseded; if not, the
    old one was still there when it was seen. (Observed twice, a rename between the looks could put both in
    ``good``, or neither.) A listed file found gone (data, or data and record) was removed after the listing, so its
    replacement may be unlisted: it is looked for in the file's folder then, and read instead; with none, a file
    whose record is gone too was moved or removed on purpose (left out, no warning), and one whose record stays is
    named missing."""
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
        except FileNotFoundError:  # removed since the listing (a quarantine, a repair): looked at below
            pass
    replaced = {manifest.sibling(data, name) for data, rec in records.items() for name in rec.supersedes}
    seen: dict[Path, tuple[bool, os.stat_result | None]] = {}  # path -> (its temp file was there, its stat)
    for path in sorted(records, key=lambda p: (p not in replaced, p)):
        record = records[path]
        tmp_there = bool(record.tmp and os.path.lexists(manifest.sibling(path, record.tmp, "tmp")))
        seen[path] = (tmp_there, _stat(path))  # the temp file first: renamed between the looks, the file is seen
    superseded = {manifest.sibling(data, name) for data, rec in records.items()
                  if _regular(seen[data][1]) and seen[data][1].st_size == rec.size for name in rec.supersedes}
    replacements: dict = {}  # _replacement's records of a folder, read when a file of it is found gone
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
            if _stat(path) is None and (path not in raw or _stat(raw[path]) is None):
                _replace(snap, path, level, replacements, table)  # removed since it was listed, data and record
                continue
            if path in files:
                snap.damaged.append(Damaged(table, path, "unrecorded", "no record: not committed by this lake"))
        elif (damage := check(path, record, level, st=seen[path][1])) is None:
            _add_good(snap, path, record)
        elif seen[path][0]:  # its record is written, its data being renamed into place (or rolled forward)
            snap.in_flight.append(path)
        elif damage.problem != "missing":
            snap.damaged.append(damage)
        elif not _replace(snap, path, level, replacements, table) and _stat(raw[path]) is not None:
            snap.damaged.append(damage)  # no replacement, and its record stays: missing indeed
    snap.good.sort()
    return snap


def _add_good(snap: Snapshot, path: Path, record: Record) -> None:
    if path not in snap.records:
        snap.good.append(path)
        snap.records[path] = record


def _replace(snap: Snapshot, path: Path, level: str, replacements: dict, table: str) -> bool:
    """``path`` was removed after the listing: if a committed file of its folder supersedes it (``repair`` rewrote
    it), ``path`` is superseded and that file read in its place. Whether there was one."""
    if (replacement := _replacement(path, replacements, table)) is None:
        return False
    snap.superseded.append(path)
    if (damage := check(*replacement, level)) is None:
        _add_good(snap, *replacement)
    else:
        snap.damaged.append(damage)
    return True


def _replacement(path: Path, replacements: dict, table: str) -> tuple[Path, Record] | None:
    """The committed file of ``path``'s folder whose record supersedes ``path`` (``repair``'s rewrite of it), if any.
    ``replacements`` keeps each folder's records as last read (folder -> (its mtime then, superseded name -> (file,
    record))); a folder is read again only once its mtime moved (a file was added or removed in it since)."""
    folder = path.parent
    if (st := _stat(folder)) is None or not stat.S_ISDIR(st.st_mode):
        return None
    mtime = st.st_mtime_ns
    if folder not in replacements or replacements[folder][0] != mtime:
        found = {}
        for record_file in folder.glob(".*" + manifest.DATA_SUFFIX + manifest.RECORD_SUFFIX):
            record = manifest.read(record_file, table=table)
            for name in record.supersedes if record is not None else ():
                found[name] = (manifest.data_path(record_file), record)
        replacements[folder] = (mtime, found)
    replacement = replacements[folder][1].get(path.name)
    return replacement if replacement is not None and _stat(replacement[0]) is not None else None


def _regular(st: os.stat_result | None) -> bool:
    return st is not None and stat.S_ISREG(st.st_mode)


def _stat(path: Path) -> os.stat_result | None:
    """The path's own stat (a link is not followed); None when it is gone."""
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _rel(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
