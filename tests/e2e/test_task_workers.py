"""A run whose units go to task workers (``dispatch.task_workers``): two ``python -m flows.unit_worker`` processes (each
its own "GPU" in CUDA_VISIBLE_DEVICES) subscribed to the session's Prefect server, scripted models with a delay per
call standing in for engines. The units run side by side, one on each worker (a busy worker does not take a second
one while the other idles); one worker stopped (SIGTERM) mid-unit ends its unit Crashed, saying so, and exits; the
dispatching run sends the unit again and the other worker, still the same process (warm: started once, unit after
unit), finishes it; the cells are the ones a run on one process computes, each once, and ``verify`` is clean.

First the same on a lake whose tables are on S3 (the tests' moto server), each worker with a folder of its own for
the lake, as on another box: nothing shared but the store and the Prefect server; the units' tokens and beats are on
the store (``dialogbench/dispatch/on_store.py``). The run on one process the cells are compared with is the
session's (``dispatch_common.alone_lake``)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import REPO, cli_env
from tests.e2e.dispatch_common import alone_lake, cells as _cells, config as _config
from dialogbench.lake.delta.mirror import CACHE_VARIABLE, mirror_folder
from tests.e2e.prefect_server import kill, spawn
from tests.lake.delta.conftest import s3_env, s3_server  # noqa: F401  (the fixtures)

pytestmark = pytest.mark.slow
UNITS = ("bot-a", "bot-b")


def _task_runs(api: str, run_id_tag: str | None = None) -> list[dict]:
    """The units' task runs on the server (``dialogbench-unit``), oldest first."""
    body = {"task_runs": {"name": {"any_": list(UNITS)}}, "sort": "EXPECTED_START_TIME_ASC"}
    runs = httpx.post(f"{api}/task_runs/filter", json=body, timeout=30).json()
    return [r for r in runs if run_id_tag is None or run_id_tag in r["tags"]]


def _ran(log: Path, unit: str, since: int = 0) -> int:
    """How many times the worker of ``log`` began ``unit``'s BotChat generation (in its log from ``since``)."""
    return log.read_text(errors="replace")[since:].count(f"Task run 'plan generate:{unit}' - Finished")


def test_task_workers_take_a_unit_each_and_a_stopped_worker_s_unit_goes_to_the_other(tmp_path, tmp_path_factory,
                                                                                     s3_env):
    env = {**cli_env(tmp_path), CACHE_VARIABLE: str(tmp_path / "box-run")}  # the run's box: its lakes' folders
    api = env.get("PREFECT_API_URL")
    assert api, "the e2e session's Prefect server"  # task workers need one they can reach
    theirs = _cells(alone_lake(tmp_path_factory))
    logs = [tmp_path / f"worker-{gpu}.log" for gpu in "01"]
    workers = [spawn([sys.executable, "-m", "flows.unit_worker", "--stop-timeout", "5"],
                     {**env, "CUDA_VISIBLE_DEVICES": gpu, CACHE_VARIABLE: str(tmp_path / f"box-{gpu}")}, log)
               for gpu, log in zip("01", logs)]
    try:
        # on a lake whose tables are on S3, each worker a box of its own (its own folder for the lake): the units'
        # tokens and beats are on the store, and each box writes the tables there
        config = _config(tmp_path, "s3", delay=0.0, dispatch=True, task_workers=True, dead_after_s=60)
        config.write_text(config.read_text().replace(f"lake: {tmp_path / 'lake-s3'}", f"lake: {s3_env}/night"))
        done = subprocess.run([sys.executable, "-m", "dialogbench.cli", "run", "--config", str(config)], cwd=REPO,
                              env=env, capture_output=True, text=True, timeout=400)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:] + logs[0].read_text()[-2000:]
        assert sorted(u for log in logs for u in UNITS if _ran(log, u)) == sorted(UNITS)  # each once, on a worker
        for box in ("box-0", "box-1"):  # each worker's own folder for the lake, beside the run's
            assert (tmp_path / box).is_dir()
        mine = _cells(mirror_folder(f"{s3_env}/night", environ=env))
        assert mine == theirs and all(len(keys) == len(set(keys)) > 0 for keys in mine.values())
        assert not (mirror_folder(f"{s3_env}/night", environ=env) / "_state" / "attempts").exists()
        # on a folder lake: a worker stopped mid-unit
        since = [len(log.read_text(errors="replace")) for log in logs]
        config = _config(tmp_path, "tasks", delay=1.0, dispatch=True, task_workers=True, dead_after_s=60)
        run = subprocess.Popen([sys.executable, "-m", "dialogbench.cli", "run", "--config", str(config)], cwd=REPO,
                               env=env, stdout=(tmp_path / "run.log").open("w"), stderr=subprocess.STDOUT)
        try:
            # both units running at once, one on each worker
            deadline, running = time.monotonic() + 240, {}
            while time.monotonic() < deadline and len(running) < 2:
                assert run.poll() is None, (tmp_path / "run.log").read_text()[-4000:]
                running = {u: i for u in UNITS for i, log in enumerate(logs) if _ran(log, u, since[i])}
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
        assert _ran(logs[1 - stopped], victim, since[1 - stopped]) == 1 and workers[1 - stopped].poll() is None
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

