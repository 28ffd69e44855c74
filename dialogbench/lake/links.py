"""A lake follows no symbolic link among its own files. The lease, the format marker, the catalog, the tables'
folders, their records and temp files are the lake's: a link in their place would let a command write through it
(the lease's holder note truncating whatever file ``.lease`` points at), read another lake's files as its own, or
move and remove files outside the lake (quarantine, repair). So every lake command refuses a lake whose top-level
entries or table folders are links (``LakeLinkError``: exit 2, one line naming it), its control files are opened
with ``O_NOFOLLOW``, and a table's files are listed without following links (``walk``: a data file or record that
is a link is damage, quarantined as a link; never its target).

Decided, not forbidden: the lake's root itself may be a link (an operator puts the lake on another disk that way;
it is resolved once, and everything inside is the real folder's), and so may its top-level ``raw`` (the vendored
inputs, only read) and ``reports`` (rendered pages an operator may serve from elsewhere; each is replaced
atomically, never written through)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

FOLLOWED = ("raw", "reports")  # top-level entries that may be links (above)
UNWALKED = (*FOLLOWED, "_quarantine")  # not tables: the quarantine's folders are made fresh by each quarantine


class LakeLinkError(ValueError):
    """A file or folder the lake owns is a link, has other hard links, or is not a plain file (the message names
    it and says what to do)."""


def linked(path: Path) -> LakeLinkError:
    try:
        target = f" -> {os.readlink(path)}"
    except OSError:
        target = ""
    return LakeLinkError(f"lake: {path} is a symbolic link{target}; dialogbench follows no link among a lake's own "
                         "files and folders: put the real file or folder there, or remove the link")


def not_plain(path: Path, mode: int) -> LakeLinkError:
    return LakeLinkError(f"lake: {path} is not a regular file ({_kind(mode)}); remove it (the lake makes its own)")


def check_top(root: Path) -> None:
    """Refuse a lake whose top-level entries are links (``.lease``, ``lake.json``, ``catalog.duckdb``, a table's
    folder, ``_state``, ``_quarantine``, …), except ``FOLLOWED``. One directory listing: cheap enough for every
    command, every stage."""
    try:
        entries = list(os.scandir(root))
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in sorted(entries, key=lambda e: e.name):
        if entry.name not in FOLLOWED and entry.is_symlink():
            raise linked(Path(entry.path))


def check_tree(root: Path) -> None:
    """``check_top``, and no folder anywhere under a table (a partition folder) is a link: what every command that
    opens a lake checks once, before it reads or writes (``walk`` finds any made later)."""
    check_top(root)
    try:
        entries = list(os.scandir(root))
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in sorted(entries, key=lambda e: e.name):
        if entry.name not in UNWALKED and entry.is_dir(follow_symlinks=False):
            walk(Path(entry.path))


def walk(directory: Path) -> dict[Path, str]:
    """Every non-folder entry under ``directory``, by kind: ``file`` (a regular file), ``link`` (a symbolic link,
    never followed) or ``other`` (a FIFO, socket or device: reading one could hang). Raises ``LakeLinkError`` for a
    folder that is a link (``directory`` itself included)."""
    if directory.is_symlink():
        raise linked(directory)
    found: dict[Path, str] = {}
    pending = [directory]
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except FileNotFoundError:  # removed meanwhile (a quarantine, a repair): nothing in it to list
            continue
        for entry in entries:
            path = Path(entry.path)
            if entry.is_symlink():
                if entry.is_dir():  # follows: a link to a folder
                    raise linked(path)
                found[path] = "link"
            elif entry.is_dir(follow_symlinks=False):
                pending.append(path)
            else:
                found[path] = "file" if entry.is_file(follow_symlinks=False) else "other"
    return found


def open_regular(path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open`` that follows no link (``O_NOFOLLOW``), never blocks on a FIFO, and refuses (``LakeLinkError``)
    anything but a regular file; returns the descriptor."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise linked(path) from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise not_plain(path, st.st_mode)
    return fd


def read_regular(path: Path, limit: int) -> bytes:
    """At most ``limit`` + 1 bytes of the regular file at ``path`` (so a caller sees one too large), without
    following a link; ``FileNotFoundError`` when there is none, ``LakeLinkError`` for a link or a non-file."""
    fd = open_regular(path, os.O_RDONLY)
    try:
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def create_new(path: Path, mode: int = 0o666) -> int:
    """A new file for writing that did not exist (``O_EXCL``: a link or file already there is an error, never
    written through): how the lake opens its temp files. Mode 0666 less the umask, as ``open(path, "w")`` makes it
    (a lake shared by a group keeps its group's write bit)."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a plain file"
