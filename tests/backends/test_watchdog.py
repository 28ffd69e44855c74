"""The engine watchdog (dialogbench/backends/watchdog.py) with stand-in processes: when the run's process
is SIGKILLed, its engine processes (and the shared resource tracker) are killed; when the engine stops
normally, the watchdog exits and leaves the shared process alone. The real vLLM engine is checked in
tests/e2e/test_kill_resume_vllm.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import psutil
import pytest

from tests.e2e.conftest import REPO

# bounds on how soon the watchdog acts (it polls every 0.5 s; these wait 15-20 s): run alone (make test), since under
# another test's load (a vLLM engine on both cores) a bound on wall time measures that load
pytestmark = pytest.mark.alone

PARENT = """
import subprocess, sys, time
from dialogbench.backends import watchdog
before = watchdog.child_pids()
sleep = [sys.executable, "-c", "import time; time.sleep(600)"]
engine = subprocess.Popen(sleep)
shared = subprocess.Popen(sleep + ["resource_tracker"])  # what multiprocessing's tracker looks like
dog = watchdog.guard(watchdog.engine_processes(before))
print(engine.pid, shared.pid, dog.pid, flush=True)
if sys.argv[1] == "close":
    engine.kill(); engine.wait()
    print(dog.wait(timeout=20), flush=True)
time.sleep(600)
"""


def _start(mode: str) -> tuple[subprocess.Popen, list[int]]:
    proc = subprocess.Popen([sys.executable, "-c", PARENT, mode], cwd=REPO, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)}, start_new_session=True)
    return proc, [int(x) for x in proc.stdout.readline().split()]


def test_a_killed_run_takes_its_engine_processes_with_it():
    proc, (engine, shared, dog) = _start("kill")
    try:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        gone, alive = psutil.wait_procs([psutil.Process(p) for p in (engine, shared)], timeout=15)
        assert not alive, f"left behind: {[p.pid for p in alive]}"
        try:  # and the watchdog is done
            assert not psutil.wait_procs([psutil.Process(dog)], timeout=15)[1]
        except psutil.NoSuchProcess:
            pass
    finally:
        for pid in (engine, shared, dog):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_a_normal_close_ends_the_watchdog_and_keeps_the_shared_process():
    proc, (engine, shared, dog) = _start("close")
    try:
        assert proc.stdout.readline().strip() == "0"  # the watchdog exited by itself
        assert psutil.Process(shared).is_running() and psutil.Process(proc.pid).is_running()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        for pid in (shared,):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
