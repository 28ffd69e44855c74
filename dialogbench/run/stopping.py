"""Stopping a run on SIGTERM or SIGINT within a bounded time, keeping what it wrote (docs/reliability.md,
"Stopping a run").

The first signal asks the run to stop. Nothing new starts: no family, stage, chunk (``check``) or, once the
deadline has passed, backend call. The chunk in flight keeps computing and writing its cells for ``timeout_s``
seconds (the config's ``stop_timeout_s``, ``--stop-timeout``); then its backend calls are abandoned (the
deadline): a backend that can give a call up (``abandonable``: scripted sleeps, OpenAI requests in flight) raises
``Stopped`` in the chunk, whose written cells stay; one that cannot (a vLLM or transformers engine computing in this
process) makes the run escalate at once. The orchestrator then ends the run Cancelled, and the process exits with
``128 + signal`` (130 SIGINT, 143 SIGTERM), as a shell reports a process the signal killed.

Escalation is the bound on everything else: at a second signal, ``FINISH_S`` after the deadline if the run has not
finished stopping, or at the deadline with a call that cannot be abandoned in flight, the ``on_escalate`` hooks (the
orchestrator marks its records Cancelled) and then the ``at_exit`` hooks (engines killed, the orchestrator's server
stopped) get ``HOOKS_S`` seconds, every process below this one is killed, one line is printed and the process exits
(the kernel drops the lake's lease with it).

Orchestration-free: the Prefect wiring registers its hooks (``flows/signals.py``); the runner, the backends and the
lease call ``check`` / ``sleep`` / ``wait`` / ``backend_call``.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import logging
import os
import signal
import sys
import threading
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, NoReturn

log = logging.getLogger("dialogbench.stop")

SIGNALS = (signal.SIGTERM, signal.SIGINT)
DEFAULT_TIMEOUT_S = 20.0  # a Prefect worker cancelling a flow run SIGKILLs it 30 s after its SIGTERM
FINISH_S = 7.0   # after the deadline, for the run to end its records, stop its server and exit
HOOKS_S = 4.0    # for the exit hooks (drain and stop a server, mark records), each bounded further by its own
POLL_S = 0.25    # how often an abandonable wait looks at the deadline


class Stopped(BaseException):
    """The run was asked to stop: raised where work would start (a stage, a chunk, a backend call after the
    deadline) or where a call was abandoned. A BaseException, so no ``except Exception`` around a backend call
    turns a stop into a failed cell. ``report``: what the chunk it ended had computed, when it ended one."""

    def __init__(self, report=None) -> None:
        super().__init__("the run was stopped")
        self.report = report


@dataclass(frozen=True)
class Request:
    """A stop asked for by ``signum`` at ``at`` (``time.monotonic``), the chunk in flight given ``timeout_s``."""

    signum: int
    at: float
    timeout_s: float

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    def elapsed(self) -> float:
        return time.monotonic() - self.at


@dataclass
class Progress:
    """What this process's run has kept so far, for the stop's message: the stages done, the cells computed (each
    written as it was emitted), the stages started and not done."""

    stages: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    cells: int = 0
    started: dict[str, int] = field(default_factory=dict)  # stage → cells it computed in this run

    def begin(self, stages: list[str]) -> None:
        with _lock:
            self.stages, self.done, self.cells, self.started = list(stages), [], 0, {}

    def stage_started(self, stage: str) -> None:
        with _lock:
            self.started.setdefault(stage, 0)

    def written(self, stage: str, cells: int) -> None:
        with _lock:
            self.cells += cells
            self.started[stage] = self.started.get(stage, 0) + cells

    def stage_done(self, stage: str) -> None:
        with _lock:
            if stage not in self.done:
                self.done.append(stage)

    def describe(self) -> str:
        """``2 of 6 stages done, 14 cells computed and kept (3 of them by generate:bot-b, stopped midway)``."""
        with _lock:
            total = f" of {len(self.stages)}" if self.stages else ""
            text = f"{len(self.done)}{total} stages done, {self.cells} cells computed and kept"
            midway = [(s, n) for s, n in self.started.items() if s not in self.done]
        if midway:
            text += " (" + "; ".join(f"{n} of them by {s}, stopped midway" if n else f"{s} stopped midway"
                                     for s, n in midway) + ")"
        return text


_lock = threading.RLock()
_timeout_s = DEFAULT_TIMEOUT_S
_request: Request | None = None
_deadline = threading.Event()     # the chunk in flight has had its time: abandonable calls give up
_escalating = threading.Event()   # the process is about to exit: nothing more is written
_cancel_timer = threading.Event() # reset(): the deadline thread of a previous stop ends
_in_flight: dict[int, bool] = {}  # backend calls in flight: id → abandonable
_call_ids = itertools.count()
_why = ""                         # why the stop escalated (a second signal, the bound), once it has
_on_escalate: list[Callable[[], None]] = []
_at_exit: list[Callable[[], None]] = []
progress = Progress()


def install(timeout_s: float | None = None) -> dict[int, object]:
    """Handle SIGTERM and SIGINT by asking the run to stop (the first) and escalating (a second); ``timeout_s``: the
    chunk in flight's time. Call again to re-assert them: Prefect's flow engine puts its own SIGTERM handler in
    place while a flow runs. Only the main thread can install handlers (elsewhere nothing changes). Returns the
    handlers it replaced."""
    global _timeout_s
    if timeout_s is not None:
        _timeout_s = float(timeout_s)
    if threading.current_thread() is not threading.main_thread():
        return {}
    replaced = {}
    for signum in SIGNALS:
        previous = signal.getsignal(signum)
        if previous is not handle:
            signal.signal(signum, handle)
            replaced[signum] = previous
    return replaced


@contextmanager
def handling(timeout_s: float | None = None) -> Iterator[None]:
    """``install`` for the block; the handlers it replaced are back afterwards (a stopped process never gets
    there: it exits)."""
    replaced = install(timeout_s)
    try:
        yield
    finally:
        for signum, previous in replaced.items():
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)


def installed() -> bool:
    try:
        return signal.getsignal(signal.SIGTERM) is handle
    except ValueError:
        return False


def handle(signum: int, frame) -> None:
    """The handler ``install`` puts in place (a process whose signals something else receives first calls it too,
    ``flows/unit_worker.py``): the first signal asks for the stop, a second one stops now."""
    if request(signum) is None:  # a second signal: stop now
        escalate(f"a second {signal.Signals(signum).name}")


def request(signum: int, *, timeout_s: float | None = None) -> Request | None:
    """Ask the run to stop (what the handler does), the chunk in flight given ``timeout_s`` (default: the one
    installed); returns the request, or None if one was already made."""
    global _request
    with _lock:
        if _request is not None:
            return None
        _request = Request(signum, time.monotonic(), _timeout_s if timeout_s is None else timeout_s)
        _cancel_timer.clear()
    threading.Thread(target=_deadline_keeper, args=(_request,), name="dialogbench-stop", daemon=True).start()
    return _request


def requested() -> Request | None:
    return _request


def check() -> None:
    """Raise ``Stopped`` if the run was asked to stop: called where a family, a stage or a chunk would start."""
    if _request is not None:
        raise Stopped()


def abandoned() -> bool:
    """The deadline has passed: calls in flight are being given up."""
    return _deadline.is_set()


def escalating() -> bool:
    return _escalating.is_set()


def sleep(seconds: float) -> None:
    """``time.sleep`` that a stop's deadline cuts short (raising ``Stopped``)."""
    if _deadline.wait(max(seconds, 0.0)):
        raise Stopped()


def wait(futures: Iterable[concurrent.futures.Future]) -> None:
    """Wait for ``futures``; at a stop's deadline, raise ``Stopped`` (whatever is still running is abandoned)."""
    pending = set(futures)
    while pending:
        if _deadline.is_set():
            raise Stopped()
        _, pending = concurrent.futures.wait(pending, timeout=POLL_S)


@contextmanager
def backend_call(*, abandonable: bool) -> Iterator[None]:
    """Around one backend call: after the deadline none starts; while it runs, the deadline knows whether it can be
    abandoned (if not, the run escalates at the deadline: nothing else would end it)."""
    if _deadline.is_set() or _escalating.is_set():
        raise Stopped()
    with _lock:
        key = next(_call_ids)
        _in_flight[key] = abandonable
    try:
        yield
    finally:
        with _lock:
            _in_flight.pop(key, None)


def on_escalate(hook: Callable[[], None]) -> Callable[[], None]:
    """Run ``hook`` when the run escalates (before the ``at_exit`` hooks); returns a function that removes it."""
    return _register(_on_escalate, hook)


def at_exit(hook: Callable[[], None]) -> Callable[[], None]:
    """Run ``hook`` before a stopped process exits, escalated or not (release engines, stop a server)."""
    return _register(_at_exit, hook)


def _register(hooks: list, hook: Callable[[], None]) -> Callable[[], None]:
    with _lock:
        hooks.append(hook)

    def remove() -> None:
        with _lock:
            if hook in hooks:
                hooks.remove(hook)
    return remove


def _deadline_keeper(stop: Request) -> None:
    log.warning("%s: stopping: no new stage or chunk starts; the chunk in flight has %g s to finish, then its "
                "calls are abandoned (another %s stops at once)", stop.name, stop.timeout_s, stop.name,
                extra={"send_to_api": False})
    if _cancel_timer.wait(stop.timeout_s):
        return
    with _lock:
        stuck = [abandonable for abandonable in _in_flight.values() if not abandonable]
    _deadline.set()
    if stuck:
        escalate(f"a backend call that cannot be abandoned still ran after {stop.timeout_s:g} s")
        return
    if not _cancel_timer.wait(FINISH_S):
        _write(f"not finished stopping: the run's main thread was at {where(threading.main_thread())}")
        escalate(f"the run had not finished stopping {stop.timeout_s + FINISH_S:g} s after the signal")


OURS = ("dialogbench", "flows", "tasks")  # the packages whose frame says which step of the run was waiting


def where(thread: threading.Thread, *, innermost: int = 3) -> str:
    """Where ``thread`` is now, on one line: its ``innermost`` frames (what it waits on), then the innermost frame of
    dialogbench's own code (which step of the run), as ``file:line function`` from the package's folder down;
    ``unknown`` for a thread that has ended."""
    frame = sys._current_frames().get(thread.ident)
    frames = [f for f, _ in traceback.walk_stack(frame)] if frame is not None else []  # innermost first
    shown = [_frame(f) for f in frames[:innermost]]
    ours = next((_frame(f) for f in frames if _package(f.f_code.co_filename) in OURS), None)
    if ours is not None and ours not in shown:
        shown.append(f"... {ours}")
    return " < ".join(shown) or "unknown"


def _frame(frame) -> str:
    return f"{_short(frame.f_code.co_filename)}:{frame.f_lineno} {frame.f_code.co_name}"


def _short(filename: str) -> str:
    """``prefect/client/orchestration/__init__.py`` for a file under site-packages, ``dialogbench/run/stopping.py`` for
    this repository's: the path from the top package's folder."""
    parts = filename.replace(os.sep, "/").split("/")
    installed = [i for i, part in enumerate(parts[:-1]) if part in ("site-packages", "dist-packages")]
    if installed:
        return "/".join(parts[installed[-1] + 1:])
    ours = [i for i, part in enumerate(parts[:-1]) if part in OURS]
    return "/".join(parts[ours[0]:] if ours else parts[-2:])


def _package(filename: str) -> str:
    short = _short(filename)
    return short.split("/", 1)[0] if "/" in short else ""


def line(stop: Request) -> str:
    """The one line a stopped run prints."""
    return (f"stopped by {stop.name}{_how()} after {stop.elapsed():.1f} s: {progress.describe()}; the next run "
            "completes the rest")


def message(stop: Request) -> str:
    """The stopped run's state message (the orchestrator's record of it)."""
    return (f"Stopped by {stop.name}{_how()} after {stop.elapsed():.1f} s: {progress.describe()}. The next run "
            "completes the rest.")


def _how() -> str:
    return f" (at once: {_why})" if _why else ""


def escalate(why: str) -> None:
    """Stop now: the hooks (bounded), every process below this one killed, one line, exit."""
    global _why
    stop = _request or Request(signal.SIGTERM, time.monotonic(), _timeout_s)
    with _lock:
        if _escalating.is_set():
            return  # another thread is already exiting
        _why = why
        _escalating.set()
        _deadline.set()
    _run_hooks([*_on_escalate, *_at_exit])
    _exit(stop)


def exit_now(stop: Request) -> NoReturn:
    """The end of a stopped process: the ``at_exit`` hooks, every process below this one killed (the server, an
    engine's processes, their watchdog), the line, and ``os._exit`` (threads abandoned at the deadline are not
    waited for)."""
    _escalating.set()
    _run_hooks(list(_at_exit))
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    _exit(stop)


def _exit(stop: Request) -> NoReturn:
    """No flush of Python's buffers here: a signal handler may have interrupted a write that holds them."""
    kill_descendants()
    _write(line(stop))
    os._exit(stop.exit_code)


def _run_hooks(hooks: list[Callable[[], None]]) -> None:
    """Run ``hooks`` in order in a thread of their own, for ``HOOKS_S`` at most (a hook may hang on a lock the
    interrupted main thread holds); a failing hook is skipped."""
    def run() -> None:
        for hook in hooks:
            try:
                hook()
            except Exception as exc:  # the exit goes on without it
                _write(f"warning: while stopping: {type(exc).__name__}: {exc}")

    worker = threading.Thread(target=run, name="dialogbench-stop-hooks", daemon=True)
    worker.start()
    worker.join(HOOKS_S)


KILL_PASSES = 5  # a thread still running while the process exits can start a process during a pass


def kill_descendants() -> None:
    """SIGKILL every process below this one (what a stopped run leaves would otherwise outlive it), again while a
    pass finds one the passes before did not: a process started after a pass listed the others would be orphaned."""
    import psutil

    seen: set[int] = set()
    for _ in range(KILL_PASSES):
        try:
            children = [p for p in psutil.Process().children(recursive=True) if p.pid not in seen]
        except psutil.Error:
            return
        if not children:
            return
        seen.update(p.pid for p in children)
        kill_all(children, timeout=2)


def kill_all(processes: list, timeout: float) -> None:
    """SIGKILL each of ``processes`` (``psutil.Process``; one that cannot be killed, gone already, is passed
    over), then wait up to ``timeout`` seconds for them to end."""
    import psutil

    for process in processes:
        try:
            process.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(processes, timeout=timeout)


def _write(text: str) -> None:
    """To stderr without Python's buffers or locks (a signal handler may have interrupted a write)."""
    try:
        os.write(2, (text + "\n").encode())
    except OSError:
        pass


def reset() -> None:
    """Forget a stop (tests, or a new run in the same process); handlers stay as they are."""
    global _request, _why, progress
    with _lock:
        _cancel_timer.set()
        _request = None
        _deadline.clear()
        _escalating.clear()
        _in_flight.clear()
        _why = ""
        _on_escalate.clear()
        _at_exit.clear()
        progress = Progress()
