"""Run a piece of work in a child process that can leave no file behind and cannot outlive its limits: where the ad-hoc
query path (``lake.query``) runs the user's SQL.

Why a child: the connection's own walls are DuckDB's to keep, and a DuckDB version broke one (2.0 lets a connection
with ``enable_external_access = false`` write ``<cwd>/:memory:`` and its three ``.wal`` names, so links of those
names planted in the working directory led into the lake); DuckDB's ``memory_limit`` bounds its buffer manager, not
every allocation (``repeat('a', 1000000000)`` took 2 GB under a 100 MB limit); and ``interrupt()`` does not stop
every operator (that query ran 19 s past a 5 s limit). Whatever DuckDB does, the child:

- works in a fresh private empty directory (``mkdtemp``), removed once it is done: no relative name the SQL uses
  reaches a file of the user's working directory, or a link planted there;
- may write no byte to any regular file (``RLIMIT_FSIZE`` 0, ``SIGXFSZ`` ignored: a write fails with EFBIG), dumps no
  core; what it produces goes through a pipe, and the parent writes it (to stdout, or to an export's file);
- is killed (SIGKILL) at its deadline, when its parent dies (``PR_SET_PDEATHSIG``), and when the parent stops
  reading (a closed pager, an export that failed); SIGINT is the parent's to handle.
The work itself caps its memory once it has opened what it reads (``limits.cap_memory``).

The child is forked, not spawned: it starts in milliseconds with the parent's modules and the work's closure. Forks
of concurrent calls are serialised, and each child closes the pipes of the others, so no child holds another's pipe
open."""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import resource
import shutil
import signal
import sys
import tempfile
import threading
import traceback
import warnings
from pathlib import Path
from typing import BinaryIO, Callable, TypeVar

T = TypeVar("T")
PR_SET_PDEATHSIG = 1
_FORKING = threading.Lock()
_PIPES: set[int] = set()  # the parent's ends of every call's pipes in flight, closed in each new child


class Deadline(Exception):
    """The child ran past its deadline and was killed."""


class Died(Exception):
    """The child ended without an answer (killed by a signal, or out of memory before it could say so)."""


def call(work: Callable[[BinaryIO], T], drain: Callable[[BinaryIO], None], *, timeout_s: float = 0) -> T:
    """``work(out)`` in a confined child; ``drain(data)`` here reads what it writes to ``out`` as it comes. Returns
    what ``work`` returns, or raises what it raised (pickled back; one that does not pickle as a RuntimeError with its
    traceback). ``Deadline`` once ``timeout_s`` (0: none) have passed since the fork, ``Died`` if it dies unheard; an
    error of ``drain`` (a reader gone, a full disk) kills the child and is raised."""
    private = tempfile.mkdtemp(prefix="dialogbench-query-")
    try:
        with _FORKING:
            data_r, data_w = os.pipe2(os.O_CLOEXEC)  # O_CLOEXEC: a program another thread starts keeps none
            result_r, result_w = os.pipe2(os.O_CLOEXEC)
            for stream in (sys.stdout, sys.stderr):  # else the child would write the parent's buffered text again
                with contextlib.suppress(Exception):
                    stream.flush()
            parent = os.getpid()
            try:
                with warnings.catch_warnings():  # Python 3.12's warning of a fork with threads: the child uses
                    warnings.simplefilter("ignore", DeprecationWarning)  # none of their state (its own connection)
                    pid = os.fork()
            except BaseException:
                for fd in (data_r, data_w, result_r, result_w):
                    os.close(fd)
                raise
            if pid == 0:
                _child(work, private, parent, (data_r, result_r), data_w, result_w)
            os.close(data_w)
            os.close(result_w)
            _PIPES.update((data_r, result_r))
        return _parent(_Child(pid), drain, data_r, result_r, timeout_s)
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _parent(child: "_Child", drain: Callable[[BinaryIO], None], data_r: int, result_r: int, timeout_s: float):
    timer = threading.Timer(timeout_s, child.kill, kwargs={"deadline": True}) if timeout_s else None
    if timer:
        timer.daemon = True
        timer.start()
    drained: BaseException | None = None
    heard = False
    try:
        try:
            with open(data_r, "rb", closefd=False) as data:
                drain(data)
        except BaseException as exc:  # a reader gone (BrokenPipeError), an export that failed, a Ctrl-C
            drained = exc
            if not _ended(data_r):  # still writing: this side failed, not the child; else its report follows
                child.kill()
        with open(result_r, "rb", closefd=False) as result:
            payload = result.read()  # its end closes when the child exits (or is killed)
        heard = True
    finally:
        if timer:
            timer.cancel()
        if not heard:
            child.kill()
        status = child.reap()
        with _FORKING:
            for fd in (data_r, result_r):
                _PIPES.discard(fd)
                os.close(fd)
    try:
        kind, value = pickle.loads(payload)
    except Exception:  # noqa: BLE001 (nothing, or a report cut short by the kill)
        kind = None
    if kind == "raised":
        raise value
    if kind == "returned" and drained is None:
        return value
    if child.deadline and kind is None:
        raise Deadline()
    if drained is not None and (child.killed or kind is not None):
        raise drained
    raise Died(_death(status))


def _ended(fd: int) -> bool:
    """Whether the child has closed its end of the pipe ``fd`` (it is done writing, its report on the way)."""
    os.set_blocking(fd, False)
    try:
        return os.read(fd, 1 << 16) == b""
    except BlockingIOError:
        return False


class _Child:
    """A forked child the parent may kill from another thread (the deadline's timer) without killing a process
    that reused its pid: a child that has ended is reaped instead, and a kill after the reap does nothing."""

    def __init__(self, pid: int) -> None:
        self.pid, self.lock = pid, threading.Lock()
        self.deadline = self.killed = False
        self.status: int | None = None

    def kill(self, deadline: bool = False) -> None:
        with self.lock:
            if self.status is None:
                try:
                    done, status = os.waitpid(self.pid, os.WNOHANG)
                except ChildProcessError:  # reaped by ``reap`` this instant: nothing to kill
                    return
                if done:
                    self.status = status
                    return
                self.deadline = self.deadline or deadline
                self.killed = True
                os.kill(self.pid, signal.SIGKILL)

    def reap(self) -> int:
        with self.lock:
            if self.status is not None:
                return self.status
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:  # ``kill`` reaped it meanwhile, under the lock
            with self.lock:
                return self.status
        with self.lock:
            self.status = status
        return status


def _death(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        with contextlib.suppress(ValueError):
            return f"signal {signal.Signals(number).name}"
        return f"signal {number}"
    return f"exit code {os.WEXITSTATUS(status)}"


def _child(work, private: str, parent: int, theirs: tuple[int, ...], data_w: int, result_w: int) -> None:
    """The forked side: confine, work, report, exit (never returns; ``os._exit`` skips the parent's cleanups)."""
    try:
        for fd in (*_PIPES, *theirs):
            with contextlib.suppress(OSError):
                os.close(fd)
        confine(Path(private), parent=parent)
        with open(data_w, "wb", buffering=io.DEFAULT_BUFFER_SIZE) as out:
            value = work(out)
        payload = _pickled("returned", value)
    except BaseException as exc:  # noqa: BLE001 (everything goes back to the parent)
        payload = _pickled("raised", exc)
    try:
        with open(result_w, "wb") as result:
            result.write(payload)
    finally:
        os._exit(0)


def _pickled(kind: str, value) -> bytes:
    try:
        payload = pickle.dumps((kind, value))
        pickle.loads(payload)  # an exception whose constructor does not take its args back would fail the parent
        return payload
    except Exception:  # noqa: BLE001 (an unpicklable value or exception: its text)
        text = "".join(traceback.format_exception(value)) if isinstance(value, BaseException) else repr(value)
        return pickle.dumps(("raised", RuntimeError(f"the query's process could not send back its answer: {text}")))


def confine(private: Path, *, parent: int) -> None:
    """The child's walls (see the module's docstring). ``private`` is an empty folder only this process uses;
    ``parent`` the pid of the process that forked it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C reaches the parent, which kills this child
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write to a file fails (EFBIG) rather than kill the child
    if sys.platform == "linux":
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    os.chdir(private)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    if os.getppid() != parent:  # the parent died before PR_SET_PDEATHSIG was set
        os._exit(1)
