"""Each committed lake file's record: a hidden sidecar ``.<name>.parquet.json`` next to it, holding the file's
sha256, size, row count and mtime. ``Lake.write`` renames the record into place *before* the data file, so a
file the lake committed always has its record; the record names its temp file, so a writer killed between the
two renames is rolled forward (``Lake.clean_temp_files``) instead of looking like a lost file. A Parquet file
with no record was not committed by this lake (a stray copy, a pre-format-4 file: see ``version.migrate``)."""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

RECORD_SUFFIX = ".json"
RECORD_TMP_SUFFIX = ".json.tmp"


@dataclass(frozen=True)
class Record:
    """What a committed file was: ``file`` (its name), ``table``, ``rows``, ``size``, ``sha256``, ``mtime_ns``
    (a cheap "has it been written since" check), ``tmp`` (the temp name it was renamed from) and
    ``supersedes`` (files of the same folder this one replaces: ``dialogbench repair``'s rewrites)."""

    file: str
    table: str
    rows: int
    size: int
    sha256: str
    mtime_ns: int
    tmp: str | None = None
    supersedes: tuple[str, ...] = field(default_factory=tuple)


def record_path(data: Path) -> Path:
    return data.with_name(f".{data.name}{RECORD_SUFFIX}")


def data_path(record: Path) -> Path:
    return record.with_name(record.name[1:-len(RECORD_SUFFIX)])


def is_record(path: Path) -> bool:
    return path.name.startswith(".") and path.name.endswith(".parquet" + RECORD_SUFFIX)


def sha256(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def describe(data: Path, *, table: str, rows: int, tmp: Path | None = None, name: str | None = None,
             supersedes: tuple[str, ...] = ()) -> Record:
    """The record of the file at ``data`` (its temp path while being written) under its final ``name``."""
    st = os.stat(data)
    return Record(name or data.name, table, int(rows), st.st_size, sha256(data), st.st_mtime_ns,
                  tmp.name if tmp else None, tuple(supersedes))


def write(final: Path, record: Record) -> Path:
    """Atomically put ``record`` next to ``final`` (temp, fsync, rename); returns the record's path."""
    path = record_path(final)
    tmp = path.with_name(f"{path.name}.{uuid.uuid4().hex[:8]}{RECORD_TMP_SUFFIX}")
    with open(tmp, "w") as handle:
        json.dump(asdict(record), handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    return path


def read(path: Path) -> Record | None:
    """The record at ``path`` (a record file), or None when it is gone or unreadable."""
    try:
        raw = json.loads(path.read_text())
        return Record(**{**raw, "supersedes": tuple(raw.get("supersedes") or ())})
    except (OSError, ValueError, TypeError):
        return None


def of(data: Path) -> Record | None:
    return read(record_path(data))


def remove(data: Path) -> None:
    """Remove a committed file: the data first, then its record (a crash between leaves a record whose file is
    missing, which the next check quarantines: never a file that looks committed with no record)."""
    data.unlink(missing_ok=True)
    record_path(data).unlink(missing_ok=True)
