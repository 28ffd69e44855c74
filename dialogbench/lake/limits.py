"""How long and how much memory an ad-hoc query (``dialogbench query`` / ``export``) may take, so none runs until it
is killed. The time limit is wall-clock from the moment the query starts until its last row is written (a timer
calls ``con.interrupt()``); the memory limit is DuckDB's ``memory_limit`` (with no temp directory to spill to, a query
that needs more fails at once). Either one exceeded is a ``LimitExceeded``: exit 2, one line naming the limit and the
flag that raises it. The defaults: ``DEFAULT_TIMEOUT_S`` and half of this machine's memory (its cgroup's limit when
that is lower). DuckDB's limit bounds DuckDB's own memory; what Python holds stays small, as results stream."""

from __future__ import annotations

import contextlib
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from dialogbench.lake.statements import QueryRefused

DEFAULT_TIMEOUT_S = 300.0
MEMORY_SHARE = 0.5
_SIZE = re.compile(r"(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)", re.I)
CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


class LimitExceeded(QueryRefused):
    """A query stopped by its time or memory limit (the message names which, and the flag that raises it)."""


def machine_memory() -> int:
    """This machine's memory in bytes, or its cgroup's limit when that is lower (a container)."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for path in CGROUP_LIMITS:
        with contextlib.suppress(OSError, ValueError):
            total = min(total, int(Path(path).read_text().strip()))  # "max" (no limit) is not a number
    return total


def default_memory_limit() -> str:
    return f"{int(machine_memory() * MEMORY_SHARE) // 2**20}MiB"


def memory_size(text: str) -> str:
    """``text`` if DuckDB reads it as a memory size (``4GB``, ``512MiB``); else ValueError saying what is."""
    if not _SIZE.fullmatch(text.strip()) or float(_SIZE.fullmatch(text.strip())["number"]) <= 0:
        raise ValueError(f"expected a memory size such as 4GB, 512MB or 2GiB, got {text!r}")
    return text.strip()


@dataclass(frozen=True)
class Limits:
    """``timeout_s``: seconds (0: none); ``memory``: a DuckDB memory size."""

    timeout_s: float = DEFAULT_TIMEOUT_S
    memory: str = field(default_factory=default_memory_limit)


@contextlib.contextmanager
def time_limit(con: duckdb.DuckDBPyConnection, limits: Limits):
    """Interrupt ``con``'s query once ``limits.timeout_s`` have passed; the interrupt it caused, or DuckDB running
    out of ``limits.memory``, leaves as ``LimitExceeded``."""
    fired = threading.Event()

    def interrupt() -> None:
        fired.set()
        with contextlib.suppress(duckdb.Error):  # the query ended (and its connection closed) meanwhile
            con.interrupt()

    timer = threading.Timer(limits.timeout_s, interrupt) if limits.timeout_s else None
    if timer:
        timer.daemon = True
        timer.start()
    try:
        yield
    except duckdb.InterruptException:
        if fired.is_set():
            raise LimitExceeded(f"the query ran past its time limit of {limits.timeout_s:g} s and was stopped; "
                                "raise it with --timeout SECONDS (0: no limit)") from None
        raise
    except duckdb.OutOfMemoryException:
        raise LimitExceeded(f"the query needed more memory than its limit of {limits.memory} and was stopped; "
                            "raise it with --memory-limit SIZE (e.g. --memory-limit 16GB), or narrow the query "
                            "(fewer columns, a WHERE, a LIMIT)") from None
    finally:
        if timer:
            timer.cancel()
