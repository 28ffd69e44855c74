"""How long and how much memory an ad-hoc query (``dialogbench query`` / ``export``) may take, so none runs until it
is killed. Both hold whatever DuckDB does, as the query runs in a child process (``lake.confined``): the time limit is
wall-clock from the moment that process starts until the last row is written, and at it the process is killed; the
memory limit is DuckDB's ``memory_limit`` (with no temp directory to spill to, a query that needs more fails at once)
and, for what DuckDB allocates outside its buffer manager (a ``repeat('a', 1000000000)``) and everything else, a cap
on the process's data segment (``RLIMIT_DATA``): what it holds once the lake is open, plus the limit, plus the stacks
of the threads Arrow may yet start (``cap_memory``). An allocation past it fails at once. Either limit exceeded is a
``LimitExceeded``: exit 2, one line naming the limit and the flag that raises it. The defaults: ``DEFAULT_TIMEOUT_S``
and half of this machine's memory (its cgroup's limit when that is lower)."""

from __future__ import annotations

import contextlib
import os
import re
import resource
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from dialogbench.lake.statements import QueryRefused

DEFAULT_TIMEOUT_S = 300.0
MEMORY_SHARE = 0.5
_SIZE = re.compile(r"(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)", re.I)
CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30,
         "tib": 2**40}  # as DuckDB reads them
DEFAULT_STACK = 8 * 2**20  # a thread's stack when RLIMIT_STACK is unlimited (glibc's default)


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


def memory_bytes(text: str) -> int:
    """The bytes a memory size (``memory_size``) stands for, with DuckDB's units (KB = 1000 B, KiB = 1024 B)."""
    size = _SIZE.fullmatch(text.strip())
    if not size:
        raise ValueError(f"expected a memory size such as 4GB, 512MB or 2GiB, got {text!r}")
    return int(float(size["number"]) * UNITS[size["unit"].lower()])


@dataclass(frozen=True)
class Limits:
    """``timeout_s``: seconds (0: none); ``memory``: a DuckDB memory size."""

    timeout_s: float = DEFAULT_TIMEOUT_S
    memory: str = field(default_factory=default_memory_limit)


def cap_memory(limits: Limits) -> None:
    """Cap this process's data segment (``RLIMIT_DATA``: its private writable memory, thread stacks included) at
    what it holds now plus ``limits.memory`` plus the stacks of the threads Arrow's pools may start during the
    query; for the query's child process only, once it has opened what it reads. Where the size now is not known
    (no ``/proc``), DuckDB's own limit is all there is."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        status = Path("/proc/self/status").read_text()
        now = int(status.split("VmData:")[1].split()[0]) * 1024
        cap = now + memory_bytes(limits.memory) + _thread_stacks()
        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        if soft == resource.RLIM_INFINITY or cap < soft:
            resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))


def _thread_stacks() -> int:
    import pyarrow as pa

    stack, _ = resource.getrlimit(resource.RLIMIT_STACK)
    stack = DEFAULT_STACK if stack == resource.RLIM_INFINITY else stack
    return (pa.cpu_count() + pa.io_thread_count()) * stack


def time_exceeded(limits: Limits) -> LimitExceeded:
    return LimitExceeded(f"the query ran past its time limit of {limits.timeout_s:g} s and was stopped; raise it "
                         "with --timeout SECONDS (0: no limit)")


def memory_exceeded(limits: Limits) -> LimitExceeded:
    return LimitExceeded(f"the query needed more memory than its limit of {limits.memory} and was stopped; raise it "
                         "with --memory-limit SIZE (e.g. --memory-limit 16GB), or narrow the query (fewer columns, "
                         "a WHERE, a LIMIT)")


@contextlib.contextmanager
def memory_errors(limits: Limits):
    """Running out of ``limits.memory`` (DuckDB's limit, or the data segment's cap: DuckDB, Arrow or Python failing
    to allocate) leaves as ``LimitExceeded``."""
    import pyarrow as pa

    try:
        yield
    except (duckdb.OutOfMemoryException, MemoryError, pa.ArrowMemoryError):
        raise memory_exceeded(limits) from None
