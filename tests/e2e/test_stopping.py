"""SIGTERM (what `timeout`, systemd and supervisors send, to the CLI's process) and SIGINT (a terminal's Ctrl-C, to
its whole process group) stop `dialogbench run` mid-generation within the bound, cleanly: exit 143 / 130 with one
line and no traceback, no process of the run's tree left (Prefect's temporary server included), the lake's lease
free, Prefect's records of the run and its family subflow Cancelled with the stop's message (read from the
temporary server's database), and a rerun completes the rest with no cell twice. A second signal stops at once.
Real CLI processes, scripted models whose calls take longer than the stop timeout. A stop whose clean end stalled
past its bound (it escalated, and the bound held) is tried once more from scratch, with a warning naming where the
run's main thread was: seen once in CI, not reproduced."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import warnings
from pathlib import Path

import psutil
import pytest

from dialogbench.run.registry import open_lake
from dialogbench.run import stopping
from dialogbench.lake import Lake
from dialogbench.lake.catalog import data_tests
from tests.e2e.conftest import REPO, cli_env, polled_glob, run_cli
from tests.e2e.test_overlapping_runs import computed, duplicates

pytestmark = [pytest.mark.slow, pytest.mark.alone]  # bounds on stop time: run alone (make test)

STOP_TIMEOUT = 2.0  # --stop-timeout: the chunk in flight's time
DELAY = 3.0         # a scripted call: longer than that, so the call in flight is abandoned
MARGIN = 8.0        # ending the flow runs, stopping the temporary server, exiting (a loaded 2-core machine)
LINE = re.compile(r"^stopped by (SIG[A-Z]+)( \(at once: [^)]*\))? after [0-9.]+ s: (\d+) of (\d+) stages done, "
                  r"(\d+) cells computed and kept(?: \(([^)]*)\))?; the next run completes the rest$")


def start(config: Path, tmp_path: Path, *args: str) -> tuple[subprocess.Popen, Path]:
    """The CLI in a process group of its own (as a shell's job), its output in a file."""
    log = tmp_path / "run.log"
    proc = subprocess.Popen([sys.executable, "-m", "dialogbench.cli", "run", "--config", str(config), *args],
                            cwd=REPO, env=cli_env(tmp_path, temporary=True), stdout=log.open("w"),
                            stderr=subprocess.STDOUT, start_new_session=True)
    return proc, log


def when_bot_b_generates(proc: subprocess.Popen, lake: Lake, log: Path, timeout: float = 300) -> list[psutil.Process]:
    """Wait until bot-a's dialogues are stored and bot-b has checkpointed a step (a call of its second step is in
    flight); returns the run's process tree then (the CLI, Prefect's server and whatever else it started)."""
    deadline = time.monotonic() + timeout
    while not (len(lake.files("generations")) == 1 and polled_glob(lake.root, "_state/*/bot-b-*")):
        assert proc.poll() is None, f"the run ended before the signal: {log.read_text()[-3000:]}"
        assert time.monotonic() < deadline, "bot-b never started generating"
        time.sleep(0.05)
    root = psutil.Process(proc.pid)
    return [root, *root.children(recursive=True)]


def assert_gone(processes: list[psutil.Process]) -> None:
    deadline = time.monotonic() + 5
    while True:
        left = [p for p in processes if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert not left, f"left behind: {[' '.join(p.cmdline())[:120] for p in left]}"


def assert_lease_free(lake: Lake) -> None:
    fd = os.open(lake.root / ".lease", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError if anyone still holds it
    finally:
        os.close(fd)


def prefect_records(tmp_path: Path) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """From the temporary server's database: flow run → (state, message) for the dialogbench flow and its family
    subflows; task run name → state."""
    with sqlite3.connect(tmp_path / "prefect" / "prefect.db") as con:
        flows = {name: (state, message or "") for name, state, message in con.execute(
            "SELECT r.name, r.state_type, s.message FROM flow_run r LEFT JOIN flow_run_state s ON s.id = r.state_id")}
        tasks = dict(con.execute("SELECT name, state_type FROM task_run"))
    return flows, tasks


def rerun_completes(config: Path, tmp_path: Path, lake: Lake, *, kept_bot_a: bool) -> None:
    """The same config (its calls without the pause, which no cell key includes): every cell once, the data tests
    pass, bot-a's stored dialogues are not computed again and bot-b resumes from its checkpoint."""
    summary = tmp_path / "rerun.json"
    rerun = run_cli(["run", "--config", str(config), "--json", str(summary)], tmp_path)  # the session's server
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "is being written by" not in rerun.stderr  # the stopped run's lease is no one's
    if kept_bot_a:
        assert computed(summary)["generate:bot-a"] == 0
    assert computed(summary)["generate:bot-b"] == 3 and "resuming" in rerun.stderr
    assert duplicates(lake) == {"generations": 0, "unieval_judgments": 0}
    assert lake.read("generations").num_rows == 6 and data_tests(lake) == {}


def stopped(config: Path, tmp_path: Path, signum: int, to: str) -> tuple[subprocess.Popen, str, float, list]:
    """Start the run, send ``signum`` to its process (or its group) while bot-b generates; returns the process once
    it exited, its output, the seconds from the signal to its exit, and its process tree when the signal went."""
    lake = open_lake(tmp_path / "lake")
    proc, log = start(config, tmp_path, "--stop-timeout", str(STOP_TIMEOUT))
    tree = when_bot_b_generates(proc, lake, log)
    assert any("uvicorn" in " ".join(p.cmdline()) for p in tree)  # Prefect's temporary server is in the tree
    sent = time.monotonic()
    if to == "group":
        os.killpg(proc.pid, signum)  # a Ctrl-C reaches every process of the terminal's foreground group
    else:
        os.kill(proc.pid, signum)
    proc.wait(timeout=120)
    return proc, log.read_text(), time.monotonic() - sent, tree


@pytest.mark.parametrize("signum, to", [(signal.SIGTERM, "process"), (signal.SIGINT, "group")],
                         ids=["SIGTERM-to-the-process", "SIGINT-to-the-group"])
def test_a_signal_stops_the_run_within_the_bound_and_the_rerun_completes(tmp_path, scripted_config, signum, to):
    config = scripted_config(limit=3, n=(4,), delay=DELAY)
    proc, out, elapsed, tree = stopped(config, tmp_path, signum, to)
    bound = STOP_TIMEOUT + stopping.FINISH_S + stopping.HOOKS_S + 2  # the escalation's own bound, and its exit
    if "(at once: the run had not finished stopping" in out and elapsed < bound and proc.returncode == 128 + signum:
        # the clean end stalled past FINISH_S and the bound held (CI saw it once: the main thread did not end the
        # family subflow within 7 s). Say where it stalled, and try once more from scratch: the second try must end
        # cleanly.
        [where] = [line for line in out.splitlines() if line.startswith("not finished stopping")]
        warnings.warn(f"{signal.Signals(signum).name}: the stop escalated by the bound after {elapsed:.1f} s; "
                      f"tried again. {where}")
        assert_gone(tree)
        shutil.rmtree(tmp_path / "lake")
        shutil.rmtree(tmp_path / "prefect")
        proc, out, elapsed, tree = stopped(config, tmp_path, signum, to)
    lake = open_lake(tmp_path / "lake")
    name = signal.Signals(signum).name

    assert proc.returncode == 128 + signum, out[-3000:]
    assert elapsed < STOP_TIMEOUT + MARGIN, out[-3000:]
    assert "Traceback" not in out
    match = LINE.match(out.strip().splitlines()[-1])
    assert match, out[-3000:]
    assert match[1] == name and match[2] is None  # stopped cleanly, not escalated
    seeds, bot_a = lake.read("seeds").num_rows, lake.read("generations").num_rows
    assert (int(match[3]), int(match[5])) == (2, seeds + bot_a) and match[6] == "generate:bot-b stopped midway"
    assert bot_a == 3  # what it wrote stays
    assert_gone(tree)
    assert_lease_free(lake)

    flows, tasks = prefect_records(tmp_path)
    [run_id] = [n for n in flows if n not in ("botchat",)]
    for flow in (run_id, "botchat"):
        state, message = flows[flow]
        assert state == "CANCELLED" and message.startswith(f"Stopped by {name} after "), flows
        assert "2 of" in message and "generate:bot-b stopped midway" in message
    assert tasks["generate:bot-b 1/1"] == "CANCELLED" and "RUNNING" not in tasks.values(), tasks

    rerun_completes(scripted_config(limit=3, n=(4,)), tmp_path, lake, kept_bot_a=True)


def test_a_second_signal_stops_at_once(tmp_path, scripted_config):
    config = scripted_config(limit=3, n=(4,), delay=DELAY)
    lake = open_lake(tmp_path / "lake")
    proc, log = start(config, tmp_path, "--stop-timeout", "120")  # the first signal alone would wait 120 s
    tree = when_bot_b_generates(proc, lake, log)
    os.kill(proc.pid, signal.SIGTERM)
    time.sleep(1.0)
    assert proc.poll() is None
    sent = time.monotonic()
    os.kill(proc.pid, signal.SIGTERM)
    proc.wait(timeout=60)
    elapsed = time.monotonic() - sent
    out = log.read_text()

    assert proc.returncode == 143 and elapsed < stopping.HOOKS_S + 5, out[-3000:]
    assert "Traceback" not in out
    match = LINE.match(out.strip().splitlines()[-1])
    assert match and match[1] == "SIGTERM" and match[2] == " (at once: a second SIGTERM)", out[-3000:]
    assert_gone(tree)
    assert_lease_free(lake)
    flows, _ = prefect_records(tmp_path)
    assert {state for state, _ in flows.values()} == {"CANCELLED"}, flows
    assert all("(at once: a second SIGTERM)" in message for _, message in flows.values())

    rerun_completes(scripted_config(limit=3, n=(4,)), tmp_path, lake, kept_bot_a=True)



def test_prefect_s_temporary_server_dies_with_a_killed_run(tmp_path, scripted_config):
    """In a session of its own (out of reach of the terminal's Ctrl-C) the server is out of reach of a kill of the
    run's process group too: the engines' watchdog kills it when the run's process dies without stopping it."""
    config = scripted_config(limit=3, n=(4,), delay=DELAY)
    lake = open_lake(tmp_path / "lake")
    proc, log = start(config, tmp_path)
    tree = when_bot_b_generates(proc, lake, log)
    [server] = [p for p in tree if "uvicorn" in " ".join(p.cmdline())]
    assert os.getsid(server.pid) != os.getsid(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)  # what the OOM killer does: no clean-up at all
    proc.wait()
    assert_gone(tree)
