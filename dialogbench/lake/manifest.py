"""Each committed lake file's record: a hidden sidecar ``.<name>.parquet.json`` next to it, holding the file's
sha256, size, row count and mtime. ``Lake.write`` renames the record into place *before* the data file, so a
file the lake committed always has its record; the record names its temp file, so a writer killed between the
two renames is rolled forward (``Lake.clean_temp_files``) instead of looking like a lost file. A Parquet file
with no record was not committed by this lake (a stray copy, a pre-format-4 file: see ``version.migrate``).

A record is input like any file on disk: ``load`` checks every field (``BadRecord`` names the field and why) and
reads it without following a link, and the names it holds (``tmp``, ``supersedes``) become paths only through
``sibling``, which accepts nothing but a plain file name in the record's own folder. So no record can make a
command fail, nor name a file outside its folder for ``verify`` or ``repair`` to remove: a bad one is damage
(``lake.health``), quarantined with its file."""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from dialogbench.lake import links

RECORD_SUFFIX = ".json"
RECORD_TMP_SUFFIX = ".json.tmp"
DATA_SUFFIX = ".parquet"
TMP_SUFFIX = ".parquet.tmp"
MAX_RECORD_BYTES = 64 * 1024  # a record is ~300 bytes; a huge one is not ours (and is not read whole)
_SHA256 = re.compile(r"[0-9a-f]{64}")
_TMP_TAIL = re.compile(r"-[0-9a-f]{8}" + re.escape(TMP_SUFFIX))
_RECORD_TMP = re.compile(r"\.(?P<data>.+)" + re.escape(RECORD_SUFFIX) + r"\.[0-9a-f]{8}" + re.escape(RECORD_TMP_SUFFIX))


class BadRecord(ValueError):
    """A record that is not one this lake wrote: ``field`` (or ``record`` for the whole) and why."""

    def __init__(self, field_name: str, why: str) -> None:
        super().__init__(f"{field_name}: {why}")
        self.field = field_name
        self.why = why


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


def temp_name(final: str, tag: str | None = None) -> str:
    """The name a writer gives the temp file of ``final`` (``.<stem>-<8 hex>.parquet.tmp``): the only name with a
    leading dot a record may hold."""
    return f".{final[:-len(DATA_SUFFIX)]}-{tag or uuid.uuid4().hex[:8]}{TMP_SUFFIX}"


def final_name(temp: str) -> str | None:
    """The file a temp name (``temp_name``) is for, or None when it is not one."""
    match = _TMP_TAIL.search(temp)
    if not temp.startswith(".") or match is None or match.end() != len(temp):
        return None
    final = temp[1:match.start()] + DATA_SUFFIX
    return final if name_problem(final) is None else None


def record_temp_name(final: str, tag: str | None = None) -> str:
    """The name ``write`` gives the temp file of the record of ``final`` (``.<final>.json.<8 hex>.json.tmp``)."""
    return f".{final}{RECORD_SUFFIX}.{tag or uuid.uuid4().hex[:8]}{RECORD_TMP_SUFFIX}"


def is_record_temp(name: str) -> bool:
    """Whether ``name`` is one ``record_temp_name`` makes: a record's temp file, which nothing but ``write`` names so."""
    match = _RECORD_TMP.fullmatch(name)
    return match is not None and name_problem(match["data"]) is None


def name_problem(name: object) -> str | None:
    """Why ``name`` is not a plain ``.parquet`` file name of one folder (None when it is one)."""
    if not isinstance(name, str):
        return f"{_show(name)} is not a string"
    for bad, what in (("/", "'/'"), ("\\", "'\\'"), ("\0", "a NUL byte"), ("..", "'..'")):
        if bad in name:
            return f"{_show(name)} is not a plain file name in this folder (it holds {what})"
    if any(ord(c) < 32 for c in name):
        return f"{_show(name)} holds a control character"
    if name.startswith("."):
        return f"{_show(name)} starts with a dot (hidden names are the lake's records and temp files)"
    if not name.endswith(DATA_SUFFIX) or name == DATA_SUFFIX:
        return f"{_show(name)} is not a {DATA_SUFFIX} file name"
    if len(name.encode()) > 255:
        return f"{_show(name)} is longer than a file name can be"
    return None


def _show(value: object, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters: a damage line quotes what it found, never 64 KiB of it."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def sibling(data: Path, name: str, field_name: str = "supersedes") -> Path:
    """``name``, read from the record of ``data``, as the path of a file beside ``data``: the one place a record's
    names become paths. A temp name (``temp_name`` of ``data``) or a plain ``.parquet`` name, nothing else (no
    folder, no ``..``), so a record never reaches outside its own folder; raises ``BadRecord`` otherwise."""
    if field_name == "tmp":
        if not isinstance(name, str) or final_name(name) != data.name:
            raise BadRecord("tmp", f"{_show(name)} is not a temp name of {data.name} "
                                   f"({temp_name(data.name, 'xxxxxxxx')})")
    elif (problem := name_problem(name)) is not None:
        raise BadRecord(field_name, problem)
    path = data.parent / name
    assert path.parent == data.parent and path.name == name  # what the checks above guarantee
    return path


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
    """Atomically put ``record`` next to ``final`` (temp, fsync, rename); returns the record's path. The record is
    checked first, as ``load`` checks it: the lake never writes a record it would refuse. The temp file is new
    (never a link written through) and is removed when the write fails (a full disk)."""
    validate(asdict(record), data_name=final.name, table=record.table)
    path = record_path(final)
    tmp = path.with_name(record_temp_name(final.name))
    try:
        with os.fdopen(links.create_new(tmp), "w") as handle:
            json.dump(asdict(record), handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


_FIELDS = {f.name for f in fields(Record)}
_OPTIONAL = {"tmp", "supersedes"}


def validate(raw: object, *, data_name: str, table: str | None) -> Record:
    """The ``Record`` that ``raw`` (a record's parsed JSON) says, for the data file named ``data_name`` of ``table``
    (None: any table); raises ``BadRecord`` naming the first field that is not what this lake writes."""
    if not isinstance(raw, dict):
        raise BadRecord("record", f"not a JSON object but {type(raw).__name__}")
    if unknown := sorted(set(raw) - _FIELDS, key=str):
        raise BadRecord(str(unknown[0]), "not a field of a record")
    if missing := sorted(_FIELDS - _OPTIONAL - set(raw)):
        raise BadRecord(missing[0], "missing")
    if raw["file"] != data_name:
        raise BadRecord("file", f"{_show(raw['file'])} is not this record's file {data_name!r}")
    if not isinstance(raw["table"], str) or (table is not None and raw["table"] != table):
        raise BadRecord("table", f"{_show(raw['table'])} is not the folder's table {table!r}")
    for name in ("rows", "size", "mtime_ns"):
        value = raw[name]
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise BadRecord(name, f"{_show(value)} is not a non-negative integer")
    if not isinstance(raw["sha256"], str) or not _SHA256.fullmatch(raw["sha256"]):
        raise BadRecord("sha256", f"{_show(raw['sha256'])} is not 64 lowercase hex digits")
    data = Path(data_name)
    tmp = raw.get("tmp")
    if tmp is not None:
        sibling(data, tmp, "tmp")
    supersedes = raw.get("supersedes")
    if supersedes is None:
        supersedes = []
    if not isinstance(supersedes, list | tuple):
        raise BadRecord("supersedes", f"{_show(supersedes)} is not a list of file names")
    for name in supersedes:
        sibling(data, name)
        if name == data_name:
            raise BadRecord("supersedes", f"{name!r} is the record's own file")
    return Record(raw["file"], raw["table"], raw["rows"], raw["size"], raw["sha256"], raw["mtime_ns"], tmp,
                  tuple(supersedes))


def load(path: Path, *, table: str | None = None) -> Record:
    """The record at ``path`` (a record file), checked (``validate``); read without following a link. Raises
    ``BadRecord`` for a record that is a link, not a file, too large, not JSON or not what this lake writes, and
    ``FileNotFoundError`` when there is none."""
    try:
        text = links.read_regular(path, MAX_RECORD_BYTES)
    except links.LakeLinkError:
        kind = "a symbolic link" if path.is_symlink() else "not a regular file"
        raise BadRecord("record", f"is {kind}; never followed") from None
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise BadRecord("record", f"unreadable ({exc.strerror or exc})") from None
    if len(text) > MAX_RECORD_BYTES:
        raise BadRecord("record", f"larger than {MAX_RECORD_BYTES} bytes")
    try:
        raw = json.loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested thousands deep
        raise BadRecord("record", f"not JSON ({type(exc).__name__}: {str(exc)[:80]})") from None
    return validate(raw, data_name=data_path(path).name, table=table)


def read(path: Path, *, table: str | None = None) -> Record | None:
    """The record at ``path``, or None when it is gone or bad (``load`` says why)."""
    try:
        return load(path, table=table)
    except (FileNotFoundError, BadRecord):
        return None


def of(data: Path) -> Record | None:
    return read(record_path(data))


def remove(data: Path) -> None:
    """Remove a committed file: the data first, then its record (a crash between leaves a record whose file is
    missing, which the next check quarantines: never a file that looks committed with no record)."""
    data.unlink(missing_ok=True)
    record_path(data).unlink(missing_ok=True)
