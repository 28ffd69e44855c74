"""The lake lease: one writer at a time. A run (or migrate, repair, a catalog or report rebuild) holds an
exclusive lock on ``<lake>/.lease`` for as long as it writes; a second one waits up to ``wait_s`` or is
refused with a message naming the holder and since when.

The lock is ``flock(2)`` on the file, so the kernel drops it the moment its process dies: a killed run
leaves no stale lease to clear by hand (its holder note stays in the file and is simply overwritten).
This needs a file system whose locks are seen by every writer: a local disk, or NFSv4 with locking.
Within one process the lease is re-entrant (the CLI takes it before Prefect starts, the flow takes it
again when run from a deployment).

``.lease`` is opened without following a link (``O_NOFOLLOW``) and must be a regular file with no other hard link:
otherwise the holder note would be written into whatever file it leads to. Such a lake is refused
(``links.LakeLinkError``, exit 2 naming it), the file it leads to left as it was; so is a ``.lease`` that is a
folder, a FIFO or a socket. A lake whose lease cannot be written (a read-only mount, no write permission) is refused
the same way (``LakeNotWritable``): every command that takes the lease writes the lake."""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import socket
import stat
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from dialogbench.run import stopping
from dialogbench.lake import links

LEASE_FILE = ".lease"
log = logging.getLogger("dialogbench.lake")

_held: dict[Path, list] = {}   # lake root → [depth, fd], for the leases this process holds
_lock = threading.Lock()


class LeaseHeld(RuntimeError):
    """Another process writes to the lake (the message names it)."""


class LakeNotWritable(RuntimeError):
    """The lake cannot be written (its lease file is refused: a read-only file system, no permission), so a command
    that writes it (run, migrate, verify, repair, catalog, report, explore) cannot start; the message names the file
    and why."""


NOT_WRITABLE = (errno.EROFS, errno.EACCES, errno.EPERM)


IN_THE_WAY = (errno.ENOTDIR, errno.EISDIR)  # a file where the lake makes a folder (``_quarantine``), or the reverse


def not_writable(exc: BaseException) -> str | None:
    """The one line for an ``OSError`` that a file could not be opened, written or moved for want of permission, on a
    read-only file system or for something else in its place (naming the file and why), else None: what the CLI
    prints for one met after the lease was taken (a table folder mounted read-only under a writable lake, a file
    named ``_quarantine``)."""
    if not isinstance(exc, OSError) or exc.errno not in (*NOT_WRITABLE, *IN_THE_WAY) or not exc.filename:
        return None
    other = f" -> {exc.filename2}" if exc.filename2 else ""
    return (f"cannot write {exc.filename}{other} ({exc.strerror}); the command stopped there, and what it wrote "
            "before is kept")


def holder(root: Path) -> dict:
    """The last holder's note: pid, host, since, command, run_id (empty if none was ever written, or unreadable)."""
    try:
        note = json.loads(links.read_regular(root / LEASE_FILE, 4096) or b"{}")
    except (OSError, ValueError):  # gone, a link (refused where the lease is taken), not JSON
        return {}
    return note if isinstance(note, dict) else {}


def held_by(root: str | os.PathLike, run_id: str) -> bool:
    """Whether the lease of the lake at ``root`` is held now, for ``run_id`` (what a dispatched worker checks
    before it writes for that run): its lock is taken and its holder note names the run."""
    root = Path(root).resolve()
    try:
        fd = links.open_regular(root / LEASE_FILE, os.O_RDONLY, 0)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return holder(root).get("run_id") == run_id
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def describe(note: dict) -> str:
    if not note:
        return "another process (no holder note yet)"
    run = f"run {note['run_id']}, " if note.get("run_id") else ""
    return (f"{run}pid {note.get('pid')} on {note.get('host')}, since {note.get('since')} "
            f"({note.get('command', '?')})")


@contextmanager
def lake_lease(root: str | os.PathLike, *, wait_s: float = 0.0, run_id: str | None = None, poll_s: float = 1.0,
               create: bool = True) -> Iterator[None]:
    """Hold the lake's lease for the ``with`` block. Waits up to ``wait_s`` seconds for a holder to finish
    (logging who, once), then raises ``LeaseHeld``. With ``create=False`` a lake that does not exist yet is
    left uncreated (nothing in it to guard)."""
    root = Path(root).resolve()
    if not create and not root.is_dir():
        yield
        return
    with _lock:
        held = _held.get(root)
        if held:
            held[0] += 1
            if run_id:  # the flow names the run the CLI's lease is for
                _write_note(held[1], {**holder(root), "run_id": run_id})
    if held:
        try:
            yield
        finally:
            with _lock:
                held[0] -= 1
        return
    root.mkdir(parents=True, exist_ok=True)
    fd = _open_lease(root / LEASE_FILE)
    try:
        _acquire(fd, root, wait_s=wait_s, poll_s=poll_s)
        note = {"pid": os.getpid(), "host": socket.gethostname(), "run_id": run_id,
                "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "command": " ".join(sys.argv)[:200]}
        _write_note(fd, note)
        with _lock:
            _held[root] = [1, fd]
        try:
            yield
        finally:
            with _lock:
                _held.pop(root, None)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _open_lease(path: Path) -> int:
    """The lease file, created if missing; never through a link, and only a regular file with one name. Something
    else in its place (a folder, a socket) or a lake that cannot be written is one ``LakeLinkError`` /
    ``LakeNotWritable`` naming it, never a bare ``OSError``."""
    try:
        fd = links.open_regular(path, os.O_RDWR | os.O_CREAT, 0o644)
    except links.LakeLinkError:
        raise
    except OSError as exc:
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            mode = None
        if mode is not None and not stat.S_ISREG(mode):  # a folder (EISDIR), a socket (ENXIO): not a lease file
            raise links.not_plain(path, mode) from None
        if exc.errno in NOT_WRITABLE:
            raise LakeNotWritable(f"lake: cannot write its lease file {path} ({exc.strerror}); this command takes "
                                  "the lake's lease (one writer at a time), so it needs a lake it may write (query "
                                  "and export read a read-only one)") from None
        raise
    links_to_it = os.fstat(fd).st_nlink
    if links_to_it != 1:
        os.close(fd)
        raise links.LakeLinkError(f"lake: {path} has {links_to_it} hard links (another name for the same file); "
                                  "dialogbench writes its holder note there: remove it (the next command makes its "
                                  "own)")
    return fd


def _write_note(fd: int, note: dict) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(note).encode(), 0)


def _acquire(fd: int, root: Path, *, wait_s: float, poll_s: float) -> None:
    deadline = time.monotonic() + max(wait_s, 0.0)
    told = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            stopping.check()  # a run stopped while it queues stops queueing
            who = describe(holder(root))
            if time.monotonic() >= deadline:
                waited = f" after waiting {wait_s:g} s" if wait_s > 0 else ""
                raise LeaseHeld(f"lake {root} is being written by {who}{waited}. Wait for it to finish, or pass "
                                "--wait SECONDS to queue behind it (a killed holder frees the lake at once)") from None
            if not told:
                log.warning("lake %s is being written by %s; waiting up to %g s", root, who, wait_s)
                told = True
            time.sleep(min(poll_s, max(deadline - time.monotonic(), 0.01)))
