"""A run whose units go to task workers (``dispatch.task_workers``): two ``python -m flows.unit_worker`` processes (each
its own "GPU" in CUDA_VISIBLE_DEVICES) subscribed to the session's Prefect server, scripted models with a delay per
call standing in for engines. The units run side by side, one on each worker (a busy worker does not take a second
one while the other idles); one worker stopped (SIGTERM) mid-unit ends its unit Crashed, saying so, and exits; the
dispatching run sends the unit again and the other worker, still the same process (warm: started once, unit after
unit), finishes it; the cells are the ones a run on one process computes, each once, and ``verify`` is clean.

The run on one process the cells are compared with is the session's (``dispatch_common.alone_lake``)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import REPO, cli_env
from tests.e2e.dispatch_common import alone_lake, cells as _cells, config as _config
from tests.e2e.prefect_server import kill, spawn

pytestmark = pytest.mark.slow
UNITS = ("bot-a", "bot-b")


def _task_runs(api: str, run_id_tag: str | None = None) -> list[dict]:
    """The units' task runs on the server (``dialogbench-unit``), oldest first."""
    body = {"task_runs": {"name": {"any_": list(UNITS)}}, "sort": "EXPECTED_START_TIME_ASC"}
    runs = httpx.post(f"{api}/task_runs/filter", json=body, timeout=30).json()
    return [r for r in runs if run_id_tag is None or run_id_tag in r["tags"]]


def _ran(log: Path, unit: str) -> int:
    """How many times the worker of ``log`` began ``unit``'s BotChat generation."""
    return log.read_text(errors="replace").count(f"Task run 'plan generate:{unit}' - Finished")


def test_task_workers_take_a_unit_each_and_a_stopped_worker_s_unit_goes_to_the_other(tmp_path, tmp_path_factory):
    env = cli_env(tmp_path)
    api = env.get("PREFECT_API_URL")
    assert api, "the e2e session's Prefect server"  # task workers need one they can reach
    theirs = _cells(alone_lake(tmp_path_factory))
    logs = [tmp_path / f"worker-{gpu}.log" for gpu in "01"]
    workers = [spawn([sys.executable, "-m", "flows.unit_worker", "--stop-timeout", "5"],
                     {**env, "CUDA_VISIBLE_DEVICES": gpu}, log) for gpu, log in zip("01", logs)]
    try:
        config = _config(tmp_path, "tasks", delay=1.0, dispatch=True, task_workers=True, dead_after_s=60)
        run = subprocess.Popen([sys.executable, "-m", "dialogbench.cli", "run", "--config", str(config)], cwd=REPO,
                               env=env, stdout=(tmp_path / "run.log").open("w"), stderr=subprocess.STDOUT)
        try:
            # both units running at once, one on each worker
            deadline, running = time.monotonic() + 240, {}
            while time.monotonic() < deadline and len(running) < 2:
                assert run.poll() is None, (tmp_path / "run.log").read_text()[-4000:]
                running = {u: i for u in UNITS for i, log in enumerate(logs) if log.exists() and _ran(log, u)}
                time.sleep(0.5)
            assert sorted(running.values()) == [0, 1], (running, [log.read_text()[-2000:] for log in logs])
            stopped = 0
            victim = next(u for u, i in running.items() if i == stopped)
            workers[stopped].send_signal(15)  # SIGTERM: the worker's stop, mid-unit
            assert workers[stopped].wait(timeout=60) == 0, logs[stopped].read_text()[-3000:]
            assert run.wait(timeout=300) == 0, (tmp_path / "run.log").read_text()[-4000:]
        finally:
            if run.poll() is None:
                run.kill()
        out = (tmp_path / "run.log").read_text()
        assert f"{victim} sent (attempt 2)" in out, out[-4000:]
        assert "unit worker: stopped by SIGTERM" in logs[stopped].read_text()
        other = logs[1 - stopped].read_text()
        assert _ran(logs[1 - stopped], victim) == 1 and workers[1 - stopped].poll() is None  # the same process
        attempts = [r for r in _task_runs(api) if r["name"] == victim and
                    any(t.startswith("run:") for t in r["tags"])][-2:]
        assert [r["state_type"] for r in attempts] == ["CRASHED", "COMPLETED"], (attempts, other[-2000:])
        assert "its task worker was stopped (SIGTERM)" in attempts[0]["state"]["message"]
        mine = _cells(tmp_path / "lake-tasks")
        assert mine == theirs and all(len(keys) == len(set(keys)) > 0 for keys in mine.values())
        check = subprocess.run([sys.executable, "-m", "dialogbench.cli", "verify", "--lake", str(tmp_path / "lake-tasks")],
                               cwd=REPO, env=env, capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
    finally:
        for worker in workers:
            kill(worker)
