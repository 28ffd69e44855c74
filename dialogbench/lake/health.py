"""Is each file of a table what the lake committed? Three levels of checking against its record
(``lake.manifest``): ``stat`` (size, and a checksum only when the mtime moved: what every view and stage read
pays, a stat per file), ``footer`` (also the row count in the Parquet footer: every run's start) and ``full``
(the sha256 of every byte: ``dialogbench verify``, the only level that sees a flipped bit whose mtime did not
move). Reading never moves or rewrites anything; ``lake.verify`` quarantines what these checks find."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from dialogbench.lake import manifest
from dialogbench.lake.manifest import Record

LEVELS = ("stat", "footer", "full")


@dataclass(frozen=True)
class Damaged:
    """A file that is not what the lake committed: ``problem`` is missing, truncated, altered, unreadable or
    unrecorded (a Parquet file without a record); ``detail`` says how."""

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
        st = path.stat()
    except FileNotFoundError:
        return Damaged(record.table, path, "missing", "its record exists, the file does not")
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
    """Every Parquet file and record under ``directory`` (one table's folder), checked at ``level``."""
    snap = Snapshot()
    if not directory.is_dir():
        return snap
    files = set(directory.rglob("*.parquet"))
    raw = {manifest.data_path(p): p for p in directory.rglob(".*.parquet" + manifest.RECORD_SUFFIX)}
    records = {data: manifest.read(p) for data, p in raw.items()}
    superseded = {data.with_name(name) for data, rec in records.items() if rec is not None and data in files
                  and data.stat().st_size == rec.size for name in rec.supersedes}
    for path in sorted(files | records.keys()):
        record = records.get(path)
        if path in superseded:
            snap.superseded.append(path)
        elif record is None:
            problem = "unreadable" if path in raw else "unrecorded"
            detail = "its record is unreadable" if path in raw else "no record: not committed by this lake"
            snap.damaged.append(Damaged(table, path, problem, detail))
        elif record.tmp and (path.parent / record.tmp).exists():  # renamed in a moment (or rolled forward)
            snap.in_flight.append(path)
        elif (damage := check(path, record, level)) is not None:
            snap.damaged.append(damage)
        else:
            snap.good.append(path)
            snap.records[path] = record
    return snap


def _rel(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
