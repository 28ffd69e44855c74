"""A run spread over a Prefect work pool: a real server, a process work pool, the `dialogbench-work` deployment and
two `prefect worker start` processes (each with its own "GPU" in CUDA_VISIBLE_DEVICES). Scripted models with a delay
per call stand in for engines. The dispatched run computes the same cells as a run on one process, each once, its
units on both workers; with one worker killed (SIGKILL, its flow run's process too) mid-unit, the dispatching run
sends the unit again, the other worker finishes it, and no cell is doubled; the data tests pass after each. That one
runs on PostgreSQL (started by the test), as a production server with several workers does."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import httpx
import psutil
import pytest
import yaml

from tests.e2e.conftest import REPO, cli_env
from tests.e2e.prefect_server import PREFECT, deploy_work, kill, postgres, running_server, spawn, tail

pytestmark = pytest.mark.slow
POOL, DEPLOYMENT = "dispatch-test", "dialogbench-work/test"


def _config(tmp_path: Path, name: str, *, delay: float, dispatch: bool, limit: int = 3,
            dead_after_s: float = 15) -> Path:
    data = {
        "lake": str(tmp_path / f"lake-{name}"),
        "models": [{"name": m, "backend": "scripted", "script": [f"{m}: sure.", f"{m}: why not?"],
                    "script_delay_s": delay} for m in ("bot-a", "bot-b")],
        "judges": [{"name": "judge", "backend": "scripted",
                    "script": ["Choice: No\nIndex: None\nReason: fine. Rating: [[7]]",
                               "Choice: Yes\nIndex: 3\nReason: odd. Rating: [[4]]"]}],
        "botchat": {"judge": "judge", "n": [4, 6], "limit": limit,
                    "dataset": str(REPO / "data_lake/raw/botchat/mutual_test.jsonl"),
                    "unieval_examples": str(REPO / "data_lake/raw/botchat/unieval_examples.json")},
        "mtbench101": {"limit": 1, "tasks": ["CM"], "judge": "judge",
                       "dataset": str(REPO / "data_lake/raw/mtbench101/mtbench101.jsonl")},
        "judge_checks": {"max_unparsed": 0.9, "probes": 0},
    }
    if dispatch:
        data["dispatch"] = {"deployment": DEPLOYMENT, "dead_after_s": dead_after_s, "poll_s": 1}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture
def pool(tmp_path):
    """A server (on SQLite), the process work pool with the work deployment, two workers ("GPU" 0 and 1); yields
    (api, env, workers: [(process, log)])."""
    yield from _pool(tmp_path, cli_env(tmp_path, temporary=True))


@pytest.fixture
def postgres_pool(tmp_path):
    """The same on PostgreSQL, the database a production Prefect server with several workers runs on."""
    with postgres() as url:
        yield from _pool(tmp_path, {**cli_env(tmp_path, temporary=True), "PREFECT_API_DATABASE_CONNECTION_URL": url})


def _pool(tmp_path: Path, env: dict):
    with running_server(tmp_path / "server", env) as (api, env):
        env = {**env, "PREFECT_WORKER_QUERY_SECONDS": "1", "PREFECT_WORKER_PREFETCH_SECONDS": "2"}
        assert deploy_work(env, tmp_path, pool=POOL, name="test") == DEPLOYMENT
        workers = []
        for gpu in ("0", "1"):
            log = tmp_path / f"worker-{gpu}.log"
            workers.append((spawn([PREFECT, "worker", "start", "--pool", POOL, "--type", "process", "--limit", "1",
                                   "--name", f"box-gpu{gpu}", "--install-policy", "never"],
                                  {**env, "CUDA_VISIBLE_DEVICES": gpu}, log), log))
        try:
            yield api, env, workers
        finally:
            for proc, _ in workers:
                kill(proc)


def _run(config: Path, env: dict, tmp_path: Path, **popen) -> subprocess.CompletedProcess | subprocess.Popen:
    args = [sys.executable, "-m", "dialogbench.cli", "run", "--config", str(config), "--json",
            str(tmp_path / f"{config.stem}.json")]
    if popen:
        return subprocess.Popen(args, cwd=REPO, env=env, **popen)
    return subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)


def _cells(lake: Path) -> dict[str, list]:
    """Every computed cell key of the model work and the judging, from the files (duplicates kept)."""
    out = {}
    for table in ("generations", "mtbench101_answers", "unieval_judgments", "mtbench101_judgments"):
        out[table] = sorted(k for (k,) in duckdb.sql(
            f"select cell_key from read_parquet('{lake / table}/**/*.parquet')").fetchall())
    return out


def _ran(log: Path, unit: str) -> bool:
    """Whether the worker whose log this is ran ``unit``'s flow run (the other one may have seen it and let go)."""
    return f"Flow run '{unit}' - Beginning" in log.read_text(errors="replace")


def _unit_runs(api: str) -> list[dict]:
    body = {"flow_runs": {"name": {"any_": ["bot-a", "bot-b"]}}, "sort": "START_TIME_ASC"}
    return httpx.post(f"{api}/flow_runs/filter", json=body, timeout=10).json()


def test_a_dispatched_run_computes_what_one_process_does_on_both_workers(pool, tmp_path):
    api, env, workers = pool
    alone = _run(_config(tmp_path, "alone", delay=0.0, dispatch=False), env, tmp_path)
    assert alone.returncode == 0, alone.stdout[-2000:] + alone.stderr[-3000:]
    # no worker dies here: the default liveness bound, so that a loaded machine's slow start of a unit's process
    # (Prefect's imports before flows/work.py beats) is not taken for a death and the unit sent twice
    sent = _run(_config(tmp_path, "sent", delay=0.5, dispatch=True, dead_after_s=120), env, tmp_path)
    assert sent.returncode == 0, (sent.stdout[-2000:] + sent.stderr[-3000:]
                                  + "".join(tail(log) for _, log in workers))
    mine, theirs = _cells(tmp_path / "lake-sent"), _cells(tmp_path / "lake-alone")
    assert mine == theirs and all(len(keys) == len(set(keys)) > 0 for keys in mine.values())
    units = {r["name"]: r for r in _unit_runs(api)}
    assert {n: r["state_type"] for n, r in units.items()} == {"bot-a": "COMPLETED", "bot-b": "COMPLETED"}
    assert {r["work_pool_name"] for r in units.values()} == {POOL}
    # the two units ran at the same time, on the two workers
    ran_on = {n: [i for i, (_, log) in enumerate(workers) if _ran(log, n)] for n in units}
    assert sorted(w for ws in ran_on.values() for w in ws) == [0, 1], (ran_on, sent.stderr[-3000:])
    summary = json.loads((tmp_path / "sent.json").read_text())
    by_stage = {s["stage"]: s for s in summary["stages"]}
    assert by_stage["generate:bot-a"]["computed"] == 3 and by_stage["mtbench101_answer:bot-b"]["computed"] > 0


def test_a_worker_killed_mid_unit_loses_nothing_and_doubles_nothing(postgres_pool, tmp_path):
    api, env, workers = postgres_pool
    log = tmp_path / "run.log"
    run = _run(_config(tmp_path, "killed", delay=1.5, dispatch=True, limit=4), env, tmp_path,
               stdout=log.open("w"), stderr=subprocess.STDOUT)
    try:
        victim, deadline = None, time.monotonic() + 240
        while victim is None and time.monotonic() < deadline:  # a unit running, its first files written
            time.sleep(1)
            running = [r for r in _unit_runs(api) if r["state_type"] == "RUNNING"]
            beats = list((tmp_path / "lake-killed" / "_state" / "attempts").glob("*.beat"))
            for r in running if beats else []:
                hits = [w for w in workers if _ran(w[1], r["name"])]
                victim = (r, hits[0]) if hits else None
        assert victim is not None, "no unit ran\n" + "".join(tail(w[1]) for w in workers)
        time.sleep(3)  # mid-stage
        proc = psutil.Process(victim[1][0].pid)
        for p in [*proc.children(recursive=True), proc]:  # the worker and the flow run's process, at once
            p.kill()
        assert run.wait(timeout=420) == 0, log.read_text()[-4000:]
    finally:
        if run.poll() is None:
            run.kill()
    text = log.read_text()
    assert "is presumed dead" in text and f"{victim[0]['name']} sent (attempt 2)" in text, text[-4000:]
    cells = _cells(tmp_path / "lake-killed")
    assert all(len(keys) == len(set(keys)) > 0 for keys in cells.values()), cells
    assert len(cells["generations"]) == 8  # 4 seeds x 2 models, each once
    attempts = [r for r in _unit_runs(api) if r["name"] == victim[0]["name"]]
    assert [r["state_type"] for r in attempts] == ["CRASHED", "COMPLETED"]
    check = subprocess.run([sys.executable, "-m", "dialogbench.cli", "verify", "--lake",
                            str(tmp_path / "lake-killed")], cwd=REPO, env=env, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_unit_waiting_for_a_free_worker_is_not_presumed_dead(pool, tmp_path):
    """One worker for two units: the second waits in the pool's queue longer than ``dead_after_s`` (15 s) while the
    first runs. Counted from when it was sent, it was presumed dead the moment the worker picked it up, crashed and
    sent again; counted from the pick-up, every unit ends after one attempt."""
    api, env, workers = pool
    kill(workers[1][0])  # the box's second "GPU" is down: its units wait for the first
    run = _run(_config(tmp_path, "queued", delay=4.0, dispatch=True), env, tmp_path)  # a unit: 30 s or more
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-3000:] + tail(workers[0][1])
    assert "presumed dead" not in out, out[-3000:]
    assert "ended COMPLETED after 1 attempt(s)" in out and "attempt 2" not in out, out[-3000:]
    cells = _cells(tmp_path / "lake-queued")
    assert all(len(keys) == len(set(keys)) > 0 for keys in cells.values()), cells
