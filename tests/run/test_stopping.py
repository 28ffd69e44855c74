"""Stopping a run (dialogbench/run/stopping.py), without Prefect: nothing new starts once stopped, the deadline abandons
what can be abandoned and escalates on what cannot, a chunk stopped midway keeps what it wrote, a run queueing for the
lease stops queueing, and an escalation (a second signal) kills what the process started, prints one line and exits
128 + the signal. The end-to-end guarantees (the CLI, Prefect's records) are tests/e2e/test_stopping.py."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import time
from types import SimpleNamespace

import psutil
import pyarrow as pa
import pytest

from dialogbench.run import registry, stopping
from dialogbench.backends import get_backend
from dialogbench.backends.base import Sampling
from dialogbench.backends.openai_backend import OpenAIBackend
from dialogbench.cells import Cell, Chunk, Emit, Planned, Stage, Table
from dialogbench.cells.runner import plan_stage, run_chunk
from dialogbench.run.config import ModelConfig
from dialogbench.run.registry import open_lake
from dialogbench.lake.lease import lake_lease
from tests.conftest import REPO_ROOT

CONVERSATION = [{"role": "user", "content": "hello"}]


@pytest.fixture(autouse=True)
def escalations(monkeypatch):
    """No stop outlives its test, and an escalation is recorded instead of ending pytest's process."""
    seen: list[str] = []
    monkeypatch.setattr(stopping, "escalate", seen.append)
    stopping.reset()
    yield seen
    stopping.reset()


def in_thread(call) -> dict:
    """Run ``call`` in a thread; the dict gets its ``result`` or ``raised`` exception and ``seconds``."""
    out: dict = {}

    def run() -> None:
        start = time.monotonic()
        try:
            out["result"] = call()
        except BaseException as exc:  # Stopped is a BaseException
            out["raised"] = exc
        out["seconds"] = time.monotonic() - start

    out["thread"] = threading.Thread(target=run, daemon=True)
    out["thread"].start()
    return out


def test_a_stop_starts_nothing_new_and_names_its_exit_code():
    stopping.check()  # not stopped: nothing raised
    stop = stopping.request(signal.SIGTERM, timeout_s=60)
    assert (stop.name, stop.exit_code) == ("SIGTERM", 143)
    assert stopping.request(signal.SIGINT) is None  # the second is an escalation, not a new request
    with pytest.raises(stopping.Stopped):
        stopping.check()
    assert stopping.Request(signal.SIGINT, 0, 1).exit_code == 130


def test_the_deadline_cuts_a_scripted_call_short():
    backend = get_backend(ModelConfig(name="slow", backend="scripted", script=["hi"], script_delay_s=30))
    call = in_thread(lambda: backend.generate([CONVERSATION], sampling=Sampling()))
    time.sleep(0.2)
    stopping.request(signal.SIGTERM, timeout_s=0.5)
    call["thread"].join(5)
    assert isinstance(call.get("raised"), stopping.Stopped)
    assert 0.6 < call["seconds"] < 2.0  # the call in flight had its 0.5 s, then was abandoned


def test_the_deadline_abandons_openai_requests_in_flight():
    release = threading.Event()
    client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(
        create=lambda **kwargs: release.wait(60))))  # an endpoint that never answers
    backend = OpenAIBackend(ModelConfig(name="remote", backend="openai", weights="w"), client=client)
    call = in_thread(lambda: backend.generate([CONVERSATION, CONVERSATION], sampling=Sampling()))
    time.sleep(0.2)
    stopping.request(signal.SIGTERM, timeout_s=0.3)
    call["thread"].join(5)
    release.set()
    assert isinstance(call.get("raised"), stopping.Stopped)
    assert call["seconds"] < 0.2 + 0.3 + 2 * stopping.POLL_S + 0.5


def test_no_backend_call_starts_after_the_deadline():
    stopping.request(signal.SIGTERM, timeout_s=0)
    assert stopping.abandoned() or stopping._deadline.wait(2)
    backend = get_backend(ModelConfig(name="fast", backend="scripted", script=["hi"]))
    with pytest.raises(stopping.Stopped):
        backend.generate([CONVERSATION], sampling=Sampling())


def test_a_call_failing_while_the_run_stops_fails_no_cell():
    backend = get_backend(ModelConfig(name="broken", backend="scripted", script=["!error:engine gone"]))
    [completion] = backend.generate([CONVERSATION], sampling=Sampling())
    assert completion.error == "engine gone"  # not stopping: a failed cell, as always
    stopping.request(signal.SIGINT, timeout_s=60)
    with pytest.raises(stopping.Stopped):  # stopping: the failure may be the stop's own doing
        backend.generate([CONVERSATION], sampling=Sampling())


def test_a_call_that_cannot_be_abandoned_makes_the_deadline_escalate(escalations):
    release = threading.Event()

    def engine_call() -> None:
        with stopping.backend_call(abandonable=False):  # what a vLLM or transformers call is
            release.wait(30)

    call = in_thread(engine_call)
    time.sleep(0.1)
    stopping.request(signal.SIGTERM, timeout_s=0.3)
    deadline = time.monotonic() + 5
    while not escalations and time.monotonic() < deadline:
        time.sleep(0.02)
    release.set()
    call["thread"].join(5)
    assert len(escalations) == 1 and "cannot be abandoned" in escalations[0]


def test_a_run_still_stopping_after_the_deadline_escalates_saying_where_it_was(escalations, monkeypatch, capfd):
    monkeypatch.setattr(stopping, "FINISH_S", 0.3)
    stopping.request(signal.SIGTERM, timeout_s=0.2)  # nothing in flight, but nobody finishes the stop either
    time.sleep(1.0)  # this thread (the main thread) is here when the bound passes
    assert len(escalations) == 1 and "had not finished stopping" in escalations[0]
    [said] = [line for line in capfd.readouterr().err.splitlines() if line.startswith("not finished stopping")]
    innermost = said.removeprefix("not finished stopping: the run's main thread was at ").split(" < ")[0]
    # a file outside dialogbench/, flows/ and tasks/ is shown by its folder and name (stopping._short)
    assert innermost.startswith("run/test_stopping.py:"), said
    assert innermost.endswith(" test_a_run_still_stopping_after_the_deadline_escalates_saying_where_it_was"), said


def test_where_names_what_a_thread_waits_on_and_the_step_of_the_run_waiting():
    waiting = in_thread(lambda: stopping.sleep(30))  # a stop's deadline would end it
    time.sleep(0.2)
    said = stopping.where(waiting["thread"])
    frames = said.split(" < ")
    assert "/threading.py:" in frames[0] and " wait" in frames[0], said  # what it waits on, innermost
    assert any(frame.startswith(("dialogbench/run/stopping.py:", "... dialogbench/run/stopping.py:"))
               and frame.endswith(" sleep") for frame in frames), said  # the step of the run that waits
    stopping.request(signal.SIGTERM, timeout_s=0.0)
    waiting["thread"].join(5)
    assert isinstance(waiting["raised"], stopping.Stopped) and stopping.where(waiting["thread"]) == "unknown"
    site = "/x/.venv/lib/python3.11/site-packages/prefect/client/orchestration/__init__.py"
    assert stopping._short(site) == "prefect/client/orchestration/__init__.py"  # an installed package, from its top
    assert stopping._short("/srv/checkout/tasks/stages.py") == "tasks/stages.py"


WORDS = Table("stop_words", pa.schema([("cell_key", pa.string()), ("item_id", pa.string()), ("run_id", pa.string())]),
              done="true")


class Words(Stage):
    """Writes two cells, then waits on a backend-like pause (the chunk in flight when the stop comes)."""

    name = "words"
    table = WORDS
    records_plan = False

    def __init__(self) -> None:
        self.computed = 0

    def plan(self, config, lake):
        return Planned([Cell(f"k{i}", f"w{i}") for i in range(4)])

    def compute(self, config, cells, emit: Emit) -> None:
        self.computed += 1
        emit([{"cell_key": c.key, "item_id": c.item_id, "run_id": emit.run_id} for c in cells[:2]])
        stopping.sleep(30)
        emit([{"cell_key": c.key, "item_id": c.item_id, "run_id": emit.run_id} for c in cells[2:]])


def test_a_chunk_stopped_midway_keeps_what_it_wrote(make_config):
    config, stage = make_config(), Words()
    lake = open_lake(config.lake)
    stopping.progress.begin(["seeds", "words", "judge"])
    stopping.progress.stage_done("seeds")
    lake = registry.open_lake(config.lake)
    chunks, _ = plan_stage(stage, config, "run-1", lake=lake)
    chunk = in_thread(lambda: run_chunk(stage, config, chunks[0], "run-1", lake=lake))
    while not lake.files("stop_words"):
        time.sleep(0.02)
    stopping.request(signal.SIGTERM, timeout_s=0.2)
    chunk["thread"].join(5)
    stopped = chunk["raised"]
    assert isinstance(stopped, stopping.Stopped) and stopped.report.computed == 2
    assert sorted(lake.read("stop_words").column("cell_key").to_pylist()) == ["k0", "k1"]  # what it wrote stays
    assert stopping.progress.describe() == \
        "1 of 3 stages done, 2 cells computed and kept (2 of them by words, stopped midway)"
    with pytest.raises(stopping.Stopped):  # a stopped run starts no stage and no chunk
        plan_stage(stage, config, "run-1", lake=registry.open_lake(config.lake))
    with pytest.raises(stopping.Stopped):
        run_chunk(stage, config, Chunk("words", 1, 1, tuple(chunks[0].cells)), "run-1",
                  lake=registry.open_lake(config.lake))
    assert stage.computed == 1


def test_a_run_queueing_for_the_lease_stops_queueing(tmp_path):
    lake = tmp_path / "lake"
    lake.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import fcntl, os, sys, time
        fd = os.open({str(lake / '.lease')!r}, os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX)
        print("held", flush=True)
        time.sleep(60)""")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"

        def queue() -> None:
            with lake_lease(lake, wait_s=600, poll_s=0.1):
                pass

        waiting = in_thread(queue)
        time.sleep(0.3)
        stopping.request(signal.SIGTERM, timeout_s=60)
        waiting["thread"].join(5)
        assert isinstance(waiting.get("raised"), stopping.Stopped) and waiting["seconds"] < 1.5
    finally:
        holder.kill()
        holder.wait()


def test_handlers_are_ours_only_inside_the_block():
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with stopping.handling(5):
        assert stopping.installed() and signal.getsignal(signal.SIGINT) is stopping.handle
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


ESCALATING = textwrap.dedent("""
    import subprocess, sys, time
    from pathlib import Path
    from dialogbench.run import stopping

    stopping.install(60)
    stopping.progress.begin(["a", "b"])
    stopping.progress.stage_done("a")
    stopping.on_escalate(lambda: Path(sys.argv[1]).write_text("records marked"))
    child = subprocess.Popen(["sleep", "60"])  # what a run starts: a server, an engine's processes
    print(child.pid, flush=True)
    while True:  # a main thread busy with something that never checks for a stop
        time.sleep(0.01)
""")


@pytest.mark.alone  # a bound on the time to stop
@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_second_signal_stops_at_once(tmp_path, signum, code):
    marker = tmp_path / "hook"
    proc = subprocess.Popen([sys.executable, "-c", ESCALATING, str(marker)], cwd=REPO_ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    child = psutil.Process(int(proc.stdout.readline()))
    proc.send_signal(signum)
    time.sleep(0.5)
    assert proc.poll() is None  # the first signal asks: the run has 60 s to stop
    start = time.monotonic()
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)
    name = signal.Signals(signum).name
    assert proc.returncode == code and time.monotonic() - start < stopping.HOOKS_S + 3
    assert err.strip().splitlines()[-1].startswith(
        f"stopped by {name} (at once: a second {name}) after ") and "1 of 2 stages done" in err
    assert err.strip().splitlines()[-1].endswith("; the next run completes the rest")
    assert "Traceback" not in err
    assert marker.read_text() == "records marked"
    assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE
