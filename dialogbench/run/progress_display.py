"""Progress a person can read while a run computes: per stage, cells done of those to compute, tokens generated per
second, and the time left at the stage's rate so far.

On a terminal (the stream is a TTY) one line per active stage is redrawn in place (ANSI: cursor up, clear to the end
of the screen), at most ``1 / redraw_s`` times a second; a stage that ends leaves one line in the scrollback. Log lines
written meanwhile (through ``sys.stderr`` or a root handler's stream) go above the block (``showing`` routes them).
Elsewhere (logs, CI, Prefect workers) a plain line per stage at most every ``DIALOGBENCH_PROGRESS_EVERY_S`` seconds
(30 by default) and one when the stage ends::

    generate:smollm2-135m  [#####.....] 12/24 cells  37 tok/s  ETA 1m20s
    progress: generate:smollm2-135m 12/24 cells (50%), 37 tok/s, ETA 1m20s

The runner (``dialogbench.cells.runner``) feeds whatever display is current: the cells a stage computes this run
(``planned``), each chunk as it starts with how to count its cells done and tokens generated so far (read when a line
is drawn, so a long chunk shows its progress) and as it ends, the stage's end. With no display showing (library use,
tests) ``current()`` is a null display and every hook does nothing. No Prefect here: the core library does not import
it. Thread-safe: chunks may run on threads.

Counts: a stage's cells to compute are its planned cells less the cached and the blocked ones; a cell is done once
computed or failed. Its rate (cells and tokens per second) runs from its first chunk's start; its ETA is the cells
left at that rate ("ETA —" until a cell is done). A stage with nothing to compute shows nothing (the runner's plan line
says so); tokens per second are left out of a stage whose chunks generated none (a stage that calls no model)."""

from __future__ import annotations

import logging
import os
import shutil
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterator, TextIO

EVERY_S_ENV = "DIALOGBENCH_PROGRESS_EVERY_S"
DEFAULT_EVERY_S = 30.0   # a plain line per stage at most this often (not a TTY)
REDRAW_S = 0.25          # a TTY's block is redrawn at most this often (4 times a second)
BAR_WIDTH = 10
DASH = "\u2014"


def _count(read: Callable[[], int] | None) -> int:
    if read is None:
        return 0
    try:
        return max(0, int(read()))
    except Exception:  # a count read mid-update: none this time rather than a failed run
        return 0


def duration(seconds: float) -> str:
    """``45s``, ``1m20s``, ``2h05m``."""
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def _printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else "?" for ch in text)


class _Chunk:
    """A chunk in flight: its cells done and tokens so far are read when a line is drawn."""

    def __init__(self, display: "ProgressDisplay", stage: "_Stage", cells, tokens) -> None:
        self.display, self.stage, self.cells, self.tokens = display, stage, cells, tokens

    def done(self) -> None:
        """The chunk ended (however): what it counted stays counted."""
        self.display._chunk_ended(self)


class _NullChunk:
    def done(self) -> None:
        pass


@dataclass
class _Stage:
    name: str
    todo: int
    cached: int = 0
    planned_at: float = 0.0
    started: float | None = None      # its first chunk's start
    cells: int = 0                    # counted by the chunks ended
    tokens: int = 0
    live: list[_Chunk] = field(default_factory=list)
    ended: float | None = None
    printed: float = 0.0              # its last plain line (not a TTY)

    def numbers(self, now: float) -> tuple[int, int, float]:
        """Cells done (at most those to compute), tokens, seconds since its first chunk started."""
        cells = self.cells + sum(_count(c.cells) for c in self.live)
        tokens = self.tokens + sum(_count(c.tokens) for c in self.live)
        elapsed = 0.0 if self.started is None else max(0.0, (self.ended or now) - self.started)
        return min(cells, self.todo), tokens, elapsed


class NullDisplay:
    """What ``current()`` is when no display shows: every hook does nothing."""

    active = False

    def planned(self, stage: str, *, todo: int, cached: int = 0) -> None:
        pass

    def chunk_started(self, stage: str, *, cells: Callable[[], int] | None = None,
                      tokens: Callable[[], int] | None = None) -> _NullChunk:
        return _NULL_CHUNK

    def stage_done(self, stage: str) -> None:
        pass

    def line(self, stage: str) -> None:
        return None


_NULL_CHUNK = _NullChunk()
NULL = NullDisplay()


class ProgressDisplay:
    """Progress of the stages a run computes, drawn on ``stream``. ``tty``: redraw in place (default: whether the
    stream is a terminal); ``clock``: seconds (``time.monotonic``); ``every_s``: the plain lines' interval (default
    ``DIALOGBENCH_PROGRESS_EVERY_S`` or 30); ``redraw_s``: the shortest time between two redraws on a TTY; ``width``:
    the terminal's columns (default: its size), a line is cut to fit (a wrapped line would break the redraw)."""

    active = True

    def __init__(self, stream: TextIO | None = None, *, tty: bool | None = None,
                 clock: Callable[[], float] = time.monotonic, every_s: float | None = None,
                 redraw_s: float = REDRAW_S, width: int | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.tty = _isatty(self.stream) if tty is None else tty
        self.clock = clock
        self.every_s = every_interval() if every_s is None else float(every_s)
        self.redraw_s = redraw_s
        self.width = width
        self._lock = threading.RLock()
        self._stages: dict[str, _Stage] = {}   # the active ones, in the order they were planned
        self._shown = 0                          # lines of the block on screen (TTY)
        self._drawn_at: float | None = None
        self._pending = False
        self.redraws = 0

    # --- what the runner feeds ---------------------------------------------------------------------------------

    def planned(self, stage: str, *, todo: int, cached: int = 0) -> None:
        """The stage has ``todo`` cells to compute this run (``cached`` more were there). Planned again while active
        (another group of it in this process): added up."""
        if todo <= 0:
            return
        with self._lock:
            now = self.clock()
            if (entry := self._stages.get(stage)) is not None:
                entry.todo += todo
                entry.cached += cached
            else:
                self._stages[stage] = _Stage(stage, todo, cached, planned_at=now, printed=now)
            self._changed(now)

    def chunk_started(self, stage: str, *, cells: Callable[[], int] | None = None,
                      tokens: Callable[[], int] | None = None) -> _Chunk | _NullChunk:
        """A chunk of ``stage`` starts; ``cells()`` and ``tokens()`` say what it has done so far. Returns its handle:
        call ``done()`` when it ends."""
        with self._lock:
            entry = self._stages.get(stage)
            if entry is None:  # a stage planned before the display started, or with nothing to compute
                return _NULL_CHUNK
            now = self.clock()
            if entry.started is None:
                entry.started = now
            chunk = _Chunk(self, entry, cells, tokens)
            entry.live.append(chunk)
            self._changed(now)
            return chunk

    def _chunk_ended(self, chunk: _Chunk) -> None:
        with self._lock:
            entry = chunk.stage
            if chunk not in entry.live:
                return
            entry.cells += _count(chunk.cells)
            entry.tokens += _count(chunk.tokens)
            entry.live.remove(chunk)
            self._changed(self.clock())

    def stage_done(self, stage: str) -> None:
        """The stage ended: its last line (a TTY's leaves the block for the scrollback)."""
        with self._lock:
            entry = self._stages.get(stage)
            if entry is None:
                return
            self._finish(entry, self.clock())

    def tick(self) -> None:
        """Time passed (``showing``'s ticker calls it): a TTY's block is redrawn when due (its ETA and rates move),
        a plain line is printed for each stage whose last one is ``every_s`` old."""
        with self._lock:
            now = self.clock()
            if self.tty:
                if self._stages:
                    self._redraw(now, force=False)
            else:
                self._print_due(now)

    def close(self) -> None:
        """Every stage still active ends here (a run that stopped, a stage run without its record step)."""
        with self._lock:
            now = self.clock()
            for entry in list(self._stages.values()):
                self._finish(entry, now)

    # --- lines --------------------------------------------------------------------------------------------------

    def line(self, stage: str) -> str | None:
        """The stage's line as a TTY shows it (None: not active)."""
        with self._lock:
            entry = self._stages.get(stage)
            return None if entry is None else self._tty_line(entry, self.clock())

    def _parts(self, entry: _Stage, now: float) -> tuple[int, str | None, str]:
        done, tokens, elapsed = entry.numbers(now)
        rate = f"{tokens / elapsed:.0f} tok/s" if tokens and elapsed > 0 else None
        if entry.ended is not None:
            when = f"done in {duration(elapsed)}"
        elif done and elapsed > 0:
            when = f"ETA {duration((entry.todo - done) * elapsed / done)}"
        else:
            when = f"ETA {DASH}"
        return done, rate, when

    def _tty_line(self, entry: _Stage, now: float) -> str:
        done, rate, when = self._parts(entry, now)
        filled = BAR_WIDTH * done // entry.todo
        text = (f"{_printable(entry.name)}  [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{entry.todo} cells"
                + (f"  {rate}" if rate else "") + f"  {when}")
        return text[:max(20, self._columns() - 1)]

    def plain_line(self, entry: _Stage, now: float) -> str:
        done, rate, when = self._parts(entry, now)
        return (f"progress: {_printable(entry.name)} {done}/{entry.todo} cells ({100 * done // entry.todo}%)"
                + (f", {rate}" if rate else "") + f", {when}")

    def _columns(self) -> int:
        return self.width or shutil.get_terminal_size((100, 24)).columns

    # --- drawing (under the lock) ---------------------------------------------------------------------------------

    def _changed(self, now: float) -> None:
        if self.tty:
            self._redraw(now, force=False)
        else:
            self._print_due(now)

    def _print_due(self, now: float) -> None:
        for entry in self._stages.values():
            if now - entry.printed >= self.every_s:
                self._print(entry, now)

    def _finish(self, entry: _Stage, now: float) -> None:
        entry.ended = now
        for chunk in list(entry.live):  # a chunk that never said it ended: what it counted so far
            entry.cells += _count(chunk.cells)
            entry.tokens += _count(chunk.tokens)
        entry.live.clear()
        del self._stages[entry.name]
        if self.tty:
            self._erase()
            self._write(self._tty_line(entry, now) + "\n")
            self._draw_block(now)
        else:
            self._print(entry, now)

    def _print(self, entry: _Stage, now: float) -> None:
        entry.printed = now
        self._write(self.plain_line(entry, now) + "\n")

    def _redraw(self, now: float, *, force: bool) -> None:
        if not force and self._drawn_at is not None and now - self._drawn_at < self.redraw_s:
            self._pending = True  # the ticker draws it when due
            return
        self._erase()
        self._draw_block(now)

    def _erase(self) -> None:
        """The block off the screen: the cursor back to its first line, everything below cleared."""
        if self._shown:
            self._write(f"\r\x1b[{self._shown}A\x1b[J")
            self._shown = 0

    def _draw_block(self, now: float) -> None:
        lines = [self._tty_line(entry, now) for entry in self._stages.values()]
        if lines:
            self._write("".join(f"\r\x1b[K{text}\n" for text in lines))
            self.redraws += 1
            self._drawn_at = now
        self._shown, self._pending = len(lines), False

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stream: progress is not worth failing the run
            pass

    # --- what others write to the same terminal -------------------------------------------------------------------

    def _passthrough(self, stream: TextIO, text: str) -> None:
        """``text`` written to the display's terminal by someone else (a log line): above the block, which is drawn
        again once the line is complete."""
        with self._lock:
            self._erase()
            stream.write(text)
            if text.endswith("\n"):
                stream.flush()
                self._draw_block(self.clock())


class _Interleaved:
    """A stream that puts what is written to it above the display's block (the terminal's other writers: log
    handlers, ``sys.stderr``). Once the display is gone it writes straight through."""

    def __init__(self, stream: TextIO, display: ProgressDisplay) -> None:
        self._stream, self._display = stream, display

    def write(self, text: str) -> int:
        display = self._display
        if display is None or not text:
            return self._stream.write(text)
        display._passthrough(self._stream, text)
        return len(text)

    def detach_display(self) -> None:
        self._display = None

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def every_interval() -> float:
    """``DIALOGBENCH_PROGRESS_EVERY_S`` (seconds, > 0), else 30."""
    try:
        value = float(os.environ.get(EVERY_S_ENV, ""))
    except ValueError:
        return DEFAULT_EVERY_S
    return value if value > 0 else DEFAULT_EVERY_S


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty()) and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError, OSError):
        return False


_current: ProgressDisplay | NullDisplay = NULL
_current_lock = threading.Lock()


def current() -> ProgressDisplay | NullDisplay:
    """The display showing in this process, or the null one."""
    return _current


@contextmanager
def showing(stream: TextIO | None = None, *, display: ProgressDisplay | None = None,
            ticker: bool = True) -> Iterator[ProgressDisplay]:
    """Show the progress of the stages computed in the block on ``stream`` (default: ``sys.stderr``): ``current()``
    is this display meanwhile. On a TTY, ``sys.stderr`` and the root logger's handlers writing to the stream write
    above the block. ``ticker``: a daemon thread calls ``tick`` (a TTY's block is redrawn as time passes, a plain line
    comes every ``every_s`` even while a long chunk reports nothing). A display already showing: this block shows in
    it (nothing more is started)."""
    global _current
    with _current_lock:
        if _current is not NULL:
            nested = _current
        else:
            nested = None
            shown = display or ProgressDisplay(stream if stream is not None else sys.stderr)
            _current = shown
    if nested is not None:
        yield nested
        return
    routed: list[tuple[logging.StreamHandler, TextIO]] = []
    proxy, saved_stderr = None, sys.stderr
    if shown.tty:
        proxy = _Interleaved(shown.stream, shown)
        if sys.stderr is shown.stream:
            sys.stderr = proxy  # handlers made meanwhile from ext://sys.stderr (Prefect's) write through it too
        for handler in logging.getLogger().handlers:
            if isinstance(handler, logging.StreamHandler) and handler.stream is shown.stream:
                routed.append((handler, handler.stream))
                handler.stream = proxy
    stop = threading.Event()
    thread = None
    if ticker:
        interval = shown.redraw_s if shown.tty else min(1.0, shown.every_s)
        thread = threading.Thread(target=_tick, args=(shown, stop, max(interval, 0.05)), name="dialogbench-progress",
                                  daemon=True)
        thread.start()
    try:
        yield shown
    finally:
        stop.set()
        if thread is not None:
            thread.join(2)
        shown.close()
        with _current_lock:
            _current = NULL
        if proxy is not None:
            proxy.detach_display()
            if sys.stderr is proxy:
                sys.stderr = saved_stderr
            for handler, stream in routed:
                if handler.stream is proxy:
                    handler.stream = stream


def _tick(display: ProgressDisplay, stop: threading.Event, interval: float) -> None:
    while not stop.wait(interval):
        try:
            display.tick()
        except Exception:  # progress is never worth a failed run
            pass
