"""A run spread over a Prefect work pool: a real server, a process work pool, the `dialogbench-work` deployment and
two `prefect worker start` processes (each with its own "GPU" in CUDA_VISIBLE_DEVICES). Scripted models with a delay
per call stand in for engines. The dispatched run computes the same cells as a run on one process, each once, its
units on both workers; with one worker killed (SIGKILL, its flow run's process too) mid-unit, the dispatching run
sends the unit again, the other worker finishes it, and no cell is doubled; the data tests pass after each. That one
runs on PostgreSQL (started by the test, with a server and workers of its own), as a production server with several
workers does. A dispatching run stopped (SIGTERM) or killed (SIGKILL) while its units run: they end Cancelled, saying
why, and those of the killed one commit nothing more.

The tests on SQLite share one server, pool, deployment and pair of workers (``sqlite_pool``, module-scoped: a
server, its deployment and two workers cost ~8 s of CPU): each test gets them with every worker alive (one a test
killed is started again) and reads only its own part of them (the workers' logs from where it began, the flow runs
of its own lake). The PostgreSQL test comes first, so that the SQLite pool is not idling beside it. The run on one
process the dispatched cells are compared with is the session's one (``dispatch_common.alone_lake``, shared with
``test_dispatch_box.py``)."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import httpx
import psutil
import pytest

from tests.e2e.conftest import REPO, cli_env
from tests.e2e.dispatch_common import POOL_DEPLOYMENT as DEPLOYMENT, alone_lake, cells as _cells, config as _config
from tests.e2e.prefect_server import PREFECT, deploy_work, kill, postgres, running_server, spawn

pytestmark = pytest.mark.slow
POOL = "dispatch-test"


@dataclass
class Worker:
    """A `prefect worker start` of the test pool on "GPU" ``gpu``; ``since``: where the current test's part of its
    log begins (a worker of the shared pool has run other tests' units before)."""

    gpu: str
    proc: subprocess.Popen
    log: Path
    since: int = 0

    def text(self) -> str:
        with self.log.open("rb") as f:
            f.seek(self.since)
            return f.read().decode(errors="replace")

    def ran(self, unit: str) -> bool:
        """Whether this worker ran ``unit``'s flow run in this test (the other one may have seen it and let go)."""
        return f"Flow run '{unit}' - Beginning" in self.text()

    def tail(self) -> str:
        return f"--- {self.log.name} ---\n{self.text()[-3000:]}"


class Pool:
    """A server's process work pool with the work deployment and two workers ("GPU" 0 and 1)."""

    def __init__(self, api: str, env: dict[str, str], folder: Path) -> None:
        self.api, self.env, self.folder, self.starts = api, env, folder, 0
        self.workers = [self._start("0"), self._start("1")]

    def _start(self, gpu: str) -> Worker:
        self.starts += 1
        log = self.folder / f"worker-{gpu}.{self.starts}.log"
        proc = spawn([PREFECT, "worker", "start", "--pool", POOL, "--type", "process", "--limit", "1",
                      "--name", f"box-gpu{gpu}", "--install-policy", "never"],
                     {**self.env, "CUDA_VISIBLE_DEVICES": gpu}, log)
        return Worker(gpu, proc, log)

    def ready(self) -> tuple[str, dict[str, str], list[Worker]]:
        """(api, env, workers) for a test: a worker a test killed started again, every log read from here on."""
        self.workers = [w if w.proc.poll() is None else self._start(w.gpu) for w in self.workers]
        for w in self.workers:
            w.since = w.log.stat().st_size if w.log.exists() else 0
        return self.api, self.env, list(self.workers)

    def stop(self) -> None:
        for w in self.workers:
            kill(w.proc)


@pytest.fixture(scope="module")
def sqlite_pool(tmp_path_factory) -> Iterator[Pool]:
    """A server on SQLite with the pool, shared by this module's tests on it."""
    folder = tmp_path_factory.mktemp("dispatch-pool")
    with _pool(folder, cli_env(folder, temporary=True)) as pool:
        yield pool


@pytest.fixture
def pool(sqlite_pool):
    """(api, env, workers) of the shared SQLite pool, both workers alive."""
    return sqlite_pool.ready()


@pytest.fixture
def postgres_pool(tmp_path):
    """The same on PostgreSQL, the database a production Prefect server with several workers runs on; its own."""
    with postgres() as url:
        env = {**cli_env(tmp_path, temporary=True), "PREFECT_API_DATABASE_CONNECTION_URL": url}
        with _pool(tmp_path, env) as pool:
            yield pool.ready()


@contextlib.contextmanager
def _pool(folder: Path, env: dict) -> Iterator[Pool]:
    with running_server(folder / "server", env) as (api, env):
        env = {**env, "PREFECT_WORKER_QUERY_SECONDS": "1", "PREFECT_WORKER_PREFETCH_SECONDS": "2"}
        assert deploy_work(env, folder, pool=POOL, name="test") == DEPLOYMENT
        pool = Pool(api, env, folder)
        try:
            yield pool
        finally:
            pool.stop()


def _run(config: Path, env: dict, tmp_path: Path, **popen) -> subprocess.CompletedProcess | subprocess.Popen:
    args = [sys.executable, "-m", "dialogbench.cli", "run", "--config", str(config), "--json",
            str(tmp_path / f"{config.stem}.json")]
    if popen:
        return subprocess.Popen(args, cwd=REPO, env=env, **popen)
    return subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)


def _unit_runs(api: str, lake: Path) -> list[dict]:
    """The units' flow runs of the run on ``lake`` (a shared server holds other tests' too)."""
    body = {"flow_runs": {"name": {"any_": ["bot-a", "bot-b"]}}, "sort": "START_TIME_ASC"}
    for attempt in range(1, 4):  # a SQLite server on a loaded machine may answer slowly (its database locked)
        try:
            runs = httpx.post(f"{api}/flow_runs/filter", json=body, timeout=30).json()
            break
        except httpx.TimeoutException:
            if attempt == 3:
                raise
            time.sleep(2)
    return [r for r in runs if r["parameters"]["overrides"]["lake"] == str(lake)]


def test_a_worker_killed_mid_unit_loses_nothing_and_doubles_nothing(postgres_pool, tmp_path):
    api, env, workers = postgres_pool
    log, lake = tmp_path / "run.log", tmp_path / "lake-killed"
    run = _run(_config(tmp_path, "killed", delay=1.5, dispatch=True, limit=4), env, tmp_path,
               stdout=log.open("w"), stderr=subprocess.STDOUT)
    try:
        victim, deadline = None, time.monotonic() + 240
        while victim is None and time.monotonic() < deadline:  # a unit running, its first files written
            time.sleep(1)
            running = [r for r in _unit_runs(api, lake) if r["state_type"] == "RUNNING"]
            beats = list((lake / "_state" / "attempts").glob("*.beat"))
            for r in running if beats else []:
                hits = [w for w in workers if w.ran(r["name"])]
                victim = (r, hits[0]) if hits else None
        assert victim is not None, "no unit ran\n" + "".join(w.tail() for w in workers)
        time.sleep(3)  # mid-stage
        proc = psutil.Process(victim[1].proc.pid)
        for p in [*proc.children(recursive=True), proc]:  # the worker and the flow run's process, at once
            p.kill()
        assert run.wait(timeout=420) == 0, log.read_text()[-4000:]
    finally:
        if run.poll() is None:
            run.kill()
    text = log.read_text()
    assert "is presumed dead" in text and f"{victim[0]['name']} sent (attempt 2)" in text, text[-4000:]
    cells = _cells(lake)
    assert all(len(keys) == len(set(keys)) > 0 for keys in cells.values()), cells
    assert len(cells["generations"]) == 8  # 4 seeds x 2 models, each once
    attempts = [r for r in _unit_runs(api, lake) if r["name"] == victim[0]["name"]]
    assert [r["state_type"] for r in attempts] == ["CRASHED", "COMPLETED"]
    check = subprocess.run([sys.executable, "-m", "dialogbench.cli", "verify", "--lake", str(lake)],
                           cwd=REPO, env=env, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_dispatched_run_computes_what_one_process_does_on_both_workers(pool, tmp_path, tmp_path_factory):
    api, env, workers = pool
    theirs = _cells(alone_lake(tmp_path_factory, env=env))  # on the pool's server if made here
    # no worker dies here: the default liveness bound, so that a loaded machine's slow start of a unit's process
    # (Prefect's imports before flows/work.py beats) is not taken for a death and the unit sent twice
    sent = _run(_config(tmp_path, "sent", delay=0.5, dispatch=True, dead_after_s=120), env, tmp_path)
    assert sent.returncode == 0, (sent.stdout[-2000:] + sent.stderr[-3000:] + "".join(w.tail() for w in workers))
    mine = _cells(tmp_path / "lake-sent")
    assert mine == theirs and all(len(keys) == len(set(keys)) > 0 for keys in mine.values())
    units = {r["name"]: r for r in _unit_runs(api, tmp_path / "lake-sent")}
    assert {n: r["state_type"] for n, r in units.items()} == {"bot-a": "COMPLETED", "bot-b": "COMPLETED"}
    assert {r["work_pool_name"] for r in units.values()} == {POOL}
    # the two units ran at the same time, on the two workers
    ran_on = {n: [i for i, w in enumerate(workers) if w.ran(n)] for n in units}
    assert sorted(w for ws in ran_on.values() for w in ws) == [0, 1], (ran_on, sent.stderr[-3000:])
    summary = json.loads((tmp_path / "sent.json").read_text())
    by_stage = {s["stage"]: s for s in summary["stages"]}
    assert by_stage["generate:bot-a"]["computed"] == 3 and by_stage["mtbench101_answer:bot-b"]["computed"] > 0


def test_a_unit_waiting_for_a_free_worker_is_not_presumed_dead(pool, tmp_path):
    """One worker for two units: the second waits in the pool's queue longer than ``dead_after_s`` (15 s) while the
    first runs. Counted from when it was sent, it was presumed dead the moment the worker picked it up, crashed and
    sent again; counted from the pick-up, every unit ends after one attempt. (The worker killed here is started again
    for a later test of the shared pool.)"""
    api, env, workers = pool
    kill(workers[1].proc)  # the box's second "GPU" is down: its units wait for the first
    run = _run(_config(tmp_path, "queued", delay=4.0, dispatch=True), env, tmp_path)  # a unit: 30 s or more
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-3000:] + workers[0].tail()
    assert "presumed dead" not in out, out[-3000:]
    assert "ended COMPLETED after 1 attempt(s)" in out and "attempt 2" not in out, out[-3000:]
    cells = _cells(tmp_path / "lake-queued")
    assert all(len(keys) == len(set(keys)) > 0 for keys in cells.values()), cells


def _units_running(api: str, lake: Path, run: subprocess.Popen, log: Path, workers: list[Worker]) -> list[dict]:
    """Wait until both units' flow runs are Running on the workers and beating (before their first commit: a
    scripted call takes 2 s here); returns them."""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        assert run.poll() is None, log.read_text()[-4000:]
        running = [r for r in _unit_runs(api, lake) if r["state_type"] == "RUNNING"]
        if len(running) == 2 and len(list((lake / "_state" / "attempts").glob("*.beat"))) >= 2:
            return running
        time.sleep(0.5)
    raise AssertionError("the units did not run\n" + log.read_text()[-3000:] + "".join(w.tail() for w in workers))


def _workers_idle(workers: list[Worker]) -> None:
    """Wait until no worker runs a flow run's process: a worker (``--limit 1``) whose last unit has ended Cancelled
    may still be reaping its process, and would take the next unit only after it."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if not any(psutil.Process(w.proc.pid).children(recursive=True) for w in workers):
                return
        except psutil.Error:  # a child ending while it is listed
            pass
        time.sleep(0.5)
    raise AssertionError("a worker still runs a flow run\n" + "".join(w.tail() for w in workers))


def _files(lake: Path) -> list[str]:
    """The lake's committed data files."""
    return sorted(str(p.relative_to(lake)) for p in lake.rglob("*.parquet") if "_state" not in p.parts)


def _units_ended(api: str, lake: Path) -> list[dict]:
    """The units' flow runs once every one has ended (Completed, Failed, Cancelled or Crashed)."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        runs = _unit_runs(api, lake)
        if runs and all(r["state_type"] in ("COMPLETED", "FAILED", "CANCELLED", "CRASHED") for r in runs):
            return runs
        time.sleep(1)
    raise AssertionError(f"the units did not end: {[(r['name'], r['state_type']) for r in _unit_runs(api, lake)]}")


def test_a_stopped_or_killed_dispatching_run_s_units_end_cancelled_and_commit_nothing_more(pool, tmp_path):
    """SIGTERM to the dispatching run while its units run: it stops (exit 143), and each unit, refused its next commit
    as withdrawn, ends Cancelled saying the run stopped (the failure automation is on Failed and Crashed: nobody is
    paged), never Failed "sent again". SIGKILL to another: it revokes nothing, but the kernel drops its lease, and each
    of its units, refused its next commit, ends Cancelled saying so; nothing of theirs lands after the kill."""
    api, env, workers = pool
    for how in ("stopped", "killed"):
        _workers_idle(workers)  # the stopped round's units' processes gone: else the next two run one after the other
        log, lake = tmp_path / f"{how}.log", tmp_path / f"lake-{how}"
        run = _run(_config(tmp_path, how, delay=2.0, dispatch=True, limit=4, dead_after_s=120), env, tmp_path,
                   stdout=log.open("w"), stderr=subprocess.STDOUT)
        try:
            _units_running(api, lake, run, log, workers)
            run.send_signal(signal.SIGTERM if how == "stopped" else signal.SIGKILL)
            code = run.wait(timeout=120)
        finally:
            if run.poll() is None:
                run.kill()
        if how == "stopped":
            assert code == 143, log.read_text()[-4000:]
            kept = None
        else:
            assert code == -signal.SIGKILL
            time.sleep(3)  # a commit past its check when the run died lands now; none may start after
            kept = _files(lake)
        units = _units_ended(api, lake)
        states = {r["name"]: (r["state_type"], r["state"]["message"] or "") for r in units}
        # (a unit not yet at its first check when its run died is told the run "does not hold" the lease)
        why = "the dispatching run stopped" if how == "stopped" else "the lake's lease"
        wrong = {name: ended for name, ended in states.items() if ended[0] != "CANCELLED" or why not in ended[1]}
        assert not wrong, f"{how}: {wrong}\n" + "".join(w.tail() for w in workers)
        if kept is not None:
            assert _files(lake) == kept  # the units of a dead run committed nothing more
        check = subprocess.run([sys.executable, "-m", "dialogbench.cli", "verify", "--lake", str(lake)],
                               cwd=REPO, env=env, capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
