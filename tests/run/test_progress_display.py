"""The progress display (``dialogbench.run.progress_display``): a TTY's block redrawn in place, plain lines elsewhere, fed
by the runner; with none showing, the runner is unaffected. A fake clock and stream: no sleep, no timing."""

from __future__ import annotations

import io
import logging

import pyarrow as pa
import pytest

from dialogbench.run import progress_display
from dialogbench.backends import metering
from dialogbench.backends.base import Completion
from dialogbench.cells import Cell, Emit, Planned, Stage, Table
from dialogbench.cells.runner import run_stage
from dialogbench.run.progress_display import ProgressDisplay, showing
from dialogbench.run.registry import open_lake
from dialogbench.run.runs import now


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class Counter:
    """What a chunk in flight has done so far (the runner reads an ``Emit`` and a ledger the same way)."""

    def __init__(self) -> None:
        self.cells = self.tokens = 0


def tty_display(clock: Clock) -> tuple[ProgressDisplay, io.StringIO]:
    stream = io.StringIO()
    return ProgressDisplay(stream, tty=True, clock=clock, width=200), stream


def last_block(text: str) -> str:
    """What the terminal shows last: the text after the last erase."""
    return text.rsplit("\x1b[J", 1)[-1]


def test_a_tty_shows_counts_rate_and_eta_redrawn_in_place():
    clock = Clock()
    display, stream = tty_display(clock)
    display.planned("generate:smollm2-135m", todo=24, cached=6)
    assert "generate:smollm2-135m  [..........] 0/24 cells  ETA \u2014" in stream.getvalue()  # before its first chunk
    counter = Counter()
    chunk = display.chunk_started("generate:smollm2-135m", cells=lambda: counter.cells, tokens=lambda: counter.tokens)
    clock.t += 80
    counter.cells, counter.tokens = 12, 37 * 80
    display.tick()
    out = stream.getvalue()
    assert last_block(out).strip("\r\x1b[K\n") == \
        "generate:smollm2-135m  [#####.....] 12/24 cells  37 tok/s  ETA 1m20s"
    assert "\r" in out and "\x1b[1A\x1b[J" in out  # the one line is redrawn over itself, not appended
    chunk.done()
    clock.t += 40
    display.stage_done("generate:smollm2-135m")
    out = stream.getvalue()
    assert out.endswith("generate:smollm2-135m  [#####.....] 12/24 cells  25 tok/s  done in 2m00s\n")
    assert display.line("generate:smollm2-135m") is None  # no longer active: its last line stays in the scrollback


def test_a_tty_shows_one_line_per_active_stage():
    clock = Clock()
    display, stream = tty_display(clock)
    display.planned("generate:a", todo=4)
    clock.t += 1
    display.planned("generate:b", todo=8)
    lines = last_block(stream.getvalue()).split("\n")[:-1]
    assert [line.split()[0].strip("\r\x1b[K") for line in lines] == ["generate:a", "generate:b"]
    clock.t += 1
    display.stage_done("generate:a")
    out = stream.getvalue()
    assert "\x1b[2A\x1b[J" in out  # both lines erased, a's last line written, b's drawn again below it
    shown = last_block(out).split("\n")
    assert shown[0] == "generate:a  [..........] 0/4 cells  done in 0s"
    assert shown[1].strip("\r\x1b[K") == "generate:b  [..........] 0/8 cells  ETA \u2014"


def test_a_tty_redraws_at_most_four_times_a_second():
    clock = Clock()
    display, stream = tty_display(clock)
    display.planned("judge", todo=100)
    counter = Counter()
    display.chunk_started("judge", cells=lambda: counter.cells)
    drawn = display.redraws
    for _ in range(50):  # 50 events within 0.2 s
        counter.cells += 1
        clock.t += 0.004
        display.tick()
    assert display.redraws == drawn
    clock.t += 0.1  # a quarter second after the last redraw
    display.tick()
    assert display.redraws == drawn + 1
    assert "50/100 cells" in last_block(stream.getvalue())


def test_a_stage_with_nothing_to_compute_shows_nothing():
    clock = Clock()
    display, stream = tty_display(clock)
    display.planned("seeds", todo=0, cached=40)
    display.chunk_started("seeds").done()
    display.stage_done("seeds")
    assert stream.getvalue() == ""


def test_plain_lines_come_at_most_every_interval_and_at_the_stage_end():
    clock = Clock()
    stream = io.StringIO()
    display = ProgressDisplay(stream, tty=False, clock=clock, every_s=30)
    display.planned("generate:m", todo=24)
    counter = Counter()
    chunk = display.chunk_started("generate:m", cells=lambda: counter.cells, tokens=lambda: counter.tokens)
    printed = []
    for second in range(1, 91):  # an event every second for 90 s
        clock.t += 1
        counter.cells, counter.tokens = second // 10, 37 * second
        display.tick()
        printed.append(stream.getvalue().count("\n"))
    assert printed[28] == 0 and printed[29] == 1  # the first after 30 s
    assert printed[-1] == 3  # then every 30 s, never more often
    assert all(b - a <= 1 for a, b in zip(printed, printed[29:]))
    assert stream.getvalue().splitlines()[0] == "progress: generate:m 3/24 cells (12%), 37 tok/s, ETA 3m30s"
    chunk.done()
    clock.t += 5
    display.stage_done("generate:m")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 4 and lines[-1] == "progress: generate:m 9/24 cells (37%), 35 tok/s, done in 1m35s"
    assert "\x1b" not in stream.getvalue() and "\r" not in stream.getvalue()


def test_the_interval_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv(progress_display.EVERY_S_ENV, "5")
    assert ProgressDisplay(io.StringIO(), tty=False).every_s == 5.0
    monkeypatch.setenv(progress_display.EVERY_S_ENV, "soon")
    assert ProgressDisplay(io.StringIO(), tty=False).every_s == 30.0
    monkeypatch.delenv(progress_display.EVERY_S_ENV)
    assert ProgressDisplay(io.StringIO(), tty=False).every_s == 30.0


def test_a_stage_name_cannot_draw_on_the_terminal():
    clock = Clock()
    display, stream = tty_display(clock)
    display.planned("generate:evil\x1b]0;x\x07", todo=2)
    assert "\x1b]" not in stream.getvalue() and "generate:evil?]0;x?" in stream.getvalue()


def test_log_lines_go_above_the_block_and_handlers_get_their_stream_back():
    tty = Tty()
    handler = logging.StreamHandler(tty)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger()
    logger.addHandler(handler)
    clock = Clock()
    try:
        with showing(tty, display=ProgressDisplay(tty, clock=clock, width=200), ticker=False) as display:
            assert display.tty and handler.stream is not tty
            display.planned("judge", todo=10)
            logging.getLogger("dialogbench.test").warning("a warning while judging")
            out = tty.getvalue()
            before, after = out.split("a warning while judging\n")
            assert before.endswith("\x1b[1A\x1b[J")  # the block erased first ...
            assert after.strip("\r\x1b[K\n") == "judge  [..........] 0/10 cells  ETA \u2014"  # ... and drawn below
        assert handler.stream is tty and progress_display.current() is progress_display.NULL
    finally:
        logger.removeHandler(handler)


# --- fed by the runner -------------------------------------------------------------------------------------------

WORDS = Table("progress_words", pa.schema([("cell_key", pa.string()), ("item_id", pa.string()),
                                           ("run_id", pa.string())]), done="true")


class Words(Stage):
    """Four cells in one chunk, written two at a time; each pair's backend call generated 50 tokens."""

    name = "words"
    table = WORDS
    records_plan = False

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock, self.seen = clock, []

    def plan(self, config, lake):
        return Planned([Cell(f"k{i}", f"w{i}") for i in range(4)])

    def compute(self, config, cells, emit: Emit) -> None:
        model = type("Model", (), {"name": "m", "backend": "scripted"})()
        for pair in (cells[:2], cells[2:]):
            if self.clock:
                self.clock.t += 10
            metering.record(model, [Completion("x", completion_tokens=25)] * 2, seconds=1.0, started_at=now())
            emit([{"cell_key": c.key, "item_id": c.item_id, "run_id": emit.run_id} for c in pair])
            self.seen.append(progress_display.current().line("words"))


def test_the_runner_feeds_the_display(make_config):
    config, clock, stream = make_config(), Clock(), io.StringIO()
    lake = open_lake(config.lake)
    stage = Words(clock)
    with showing(stream, display=ProgressDisplay(stream, tty=False, clock=clock, every_s=1000), ticker=False):
        report = run_stage(stage, config, "run-1", lake=lake)
        again = run_stage(Words(clock), config, "run-2", lake=lake)  # all cached: nothing to show
    assert report.computed == 4 and again.computed == 0
    # mid-chunk, the display read the chunk's cells and tokens so far
    assert stage.seen[0] is not None and "2/4 cells" in stage.seen[0] and "5 tok/s" in stage.seen[0]
    assert "ETA 10s" in stage.seen[0]
    assert stream.getvalue() == "progress: words 4/4 cells (100%), 5 tok/s, done in 20s\n"


def test_with_no_display_the_runner_is_unaffected(make_config):
    config = make_config()
    assert progress_display.current() is progress_display.NULL
    stage = Words()
    report = run_stage(stage, config, "run-1", lake=open_lake(config.lake))
    assert report.computed == 4 and report.failed == 0
    assert stage.seen == [None, None]
    assert sorted(open_lake(config.lake).read("progress_words").column("cell_key").to_pylist()) == \
        ["k0", "k1", "k2", "k3"]


def test_a_display_showing_is_not_started_twice():
    stream = io.StringIO()
    with showing(stream, ticker=False) as outer:
        with showing(io.StringIO(), ticker=False) as inner:
            assert inner is outer and progress_display.current() is outer
        assert progress_display.current() is outer
    assert progress_display.current() is progress_display.NULL


@pytest.mark.parametrize("seconds,text", [(0, "0s"), (59.4, "59s"), (80, "1m20s"), (3599, "59m59s"), (7500, "2h05m")])
def test_durations_read_as_a_person_says_them(seconds, text):
    assert progress_display.duration(seconds) == text

