"""A full disk is not a transient error: a write that fails with ENOSPC (or EDQUOT, a quota) raises ``DiskFull``,
whose one line says "disk full", which file and how much space is left, after the writer removed its own partial
temp files. Retrying it would only wait (Prefect's chunk retries skip it: ``tasks/stages.py``), and the CLI exits
``DISK_FULL`` with that line (``dialogbench/cli.py``). Everything committed before it stays committed: the next run,
on a freed disk, computes only what is missing."""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

FULL = {errno.ENOSPC: "no space left on device", errno.EDQUOT: "disk quota exceeded"}
_MESSAGES = ("No space left on device", "Disk quota exceeded")  # how DuckDB and pyarrow put it in their own errors


class DiskFull(RuntimeError):
    """A write failed because the disk (or the user's quota) is full; the message says where and how much is free.
    Built by ``disk_full``; its only argument is the message, so it pickles (Prefect keeps task exceptions)."""


def is_disk_full(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or an exception it was raised from, or during) is a full disk or quota."""
    return any(isinstance(e, DiskFull) or (isinstance(e, OSError) and e.errno in FULL)
               or any(m in str(e) for m in _MESSAGES) for e in _chain(exc))


def disk_full(target: Path, root: Path, exc: BaseException | None = None) -> DiskFull:
    """The ``DiskFull`` for a failed write of ``target`` (a file of the lake at ``root``): the file (in the lake),
    why, and the space left on the lake's file system."""
    if isinstance(exc, DiskFull):
        return exc
    why = next((FULL[e.errno] for e in _chain(exc) if isinstance(e, OSError) and e.errno in FULL),
               "no space left on device")
    try:
        where = target.relative_to(root)
    except ValueError:
        where = target
    return DiskFull(f"disk full: could not write {where} in the lake {root} ({why}; {free_space(root)}). "
                    "Its partial files are removed and everything written before is kept: free some space and run "
                    "again, and only what is missing is computed")


def as_disk_full(exc: BaseException, root: Path) -> DiskFull | None:
    """``exc`` as the ``DiskFull`` it is or was raised from (a write outside ``Lake.write``, such as a report or a
    DuckDB file, named by the error's file name when it has one), or None when it is not a full disk."""
    if not is_disk_full(exc):
        return None
    found = next((e for e in _chain(exc) if isinstance(e, DiskFull)), None)
    if found is not None:
        return found
    named = next((e.filename for e in _chain(exc) if isinstance(e, OSError) and e.filename), None)
    return disk_full(Path(named) if named else root, root, exc)


def free_space(path: Path) -> str:
    """``"12.0 KiB free of 4.0 MiB"`` for the file system holding ``path`` (its nearest existing folder)."""
    probe = Path(path)
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        usage = shutil.disk_usage(probe)
    except OSError:
        return "free space unknown"
    return f"{size(usage.free)} free of {size(usage.total)} on its file system"


def size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def _chain(exc: BaseException | None):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__
