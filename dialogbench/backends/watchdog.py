"""Engine processes never outlive the run that started them.

vLLM runs its engine in child processes (``VLLM::EngineCore`` and its workers). When the run's
process dies without closing the engine (SIGKILL, the OOM killer), they would stay behind, holding
memory and the accelerator. ``guard`` starts a small watchdog process, in its own session so a kill
of the run's process group does not take it first, that polls the run's process: once it is gone,
the watchdog kills the engine's processes and exits. It also exits by itself once they are all gone
(the engine was closed normally).

Run as ``python -m dialogbench.backends.watchdog PARENT_PID:CREATE_TIME PID:CREATE_TIME ... +PID:CREATE_TIME``
(``+``: a shared process, killed with the others but not waited for).
"""

from __future__ import annotations

import subprocess
import sys
import time

import psutil

from dialogbench.run.stopping import kill_all

POLL_S = 0.5


def engine_processes(before: set[int]) -> list[psutil.Process]:
    """This process's descendants that were not there in ``before`` (the pids seen before the engine)."""
    return [p for p in psutil.Process().children(recursive=True) if p.pid not in before]


def child_pids() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True)}


def _shared(process: psutil.Process) -> bool:
    """multiprocessing's resource tracker: started with the engine, but it serves this process for the
    rest of its life, so a normal close leaves it running."""
    try:
        return "resource_tracker" in " ".join(process.cmdline())
    except psutil.Error:
        return False


def guard(processes: list[psutil.Process]) -> subprocess.Popen | None:
    """Start the watchdog for ``processes`` (none: nothing to guard). It waits for the engine's own
    processes; a shared one (the resource tracker) is only killed if this process dies."""
    engine = [p for p in processes if not _shared(p)]
    if not engine:
        return None
    me = psutil.Process()
    args = ([f"{p.pid}:{p.create_time()!r}" for p in [me, *engine]]
            + [f"+{p.pid}:{p.create_time()!r}" for p in processes if _shared(p)])
    return subprocess.Popen([sys.executable, "-m", "dialogbench.backends.watchdog", *args],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, close_fds=True)


def _alive(pid: int, created: float | None = None) -> psutil.Process | None:
    try:
        process = psutil.Process(pid)
        if created is not None and abs(process.create_time() - created) > 1e-3:
            return None  # the pid was reused by another process
        return process if process.status() != psutil.STATUS_ZOMBIE else None
    except psutil.NoSuchProcess:
        return None


def watch(parent: tuple[int, float], guarded: list[tuple[int, float]], shared: list[tuple[int, float]]) -> None:
    """Until every ``guarded`` process is gone: if ``parent`` dies, kill them and the ``shared`` ones."""
    while True:
        living = [p for p in (_alive(pid, created) for pid, created in guarded) if p is not None]
        if not living:
            return
        if _alive(*parent) is None:
            living += [p for p in (_alive(pid, created) for pid, created in shared) if p is not None]
            kill_all(living, timeout=10)
            return
        time.sleep(POLL_S)


def _pairs(args: list[str]) -> list[tuple[int, float]]:
    return [(int(pid), float(created)) for pid, created in (a.lstrip("+").split(":", 1) for a in args)]


if __name__ == "__main__":
    own = _pairs([a for a in sys.argv[1:] if not a.startswith("+")])
    watch(own[0], own[1:], _pairs([a for a in sys.argv[1:] if a.startswith("+")]))
