"""A scheduled deployment really runs: Prefect's *scheduler service* creates a flow run of the real
pipeline flow, a process worker executes it, and the results land in the lake.

`prefect deploy` registering a schedule proves nothing on its own: with SQLAlchemy 2.1 the deploy
succeeded but every scheduler loop failed ("Can't evaluate bulk DML statement; please supply a
bulk_dml decorated function", raised by the bulk insert in
`prefect.server.models.deployments._insert_scheduled_flow_runs`), so no run was ever created. Here a
real server (its own PREFECT_HOME, fast scheduler loop), a process work pool, an interval-scheduled
deployment of `flows/pipeline.py:pipeline` on a scripted config and a worker run in subprocesses; the
test waits for a run that the scheduler made (`auto_scheduled`, `created_by.type == "SCHEDULE"`: only
the scheduler's `_generate_scheduled_flow_runs` sets these; nothing here creates a run by hand) to
complete, and fails at once if the server logs the bulk DML error. The fast test pins the cause:
SQLAlchemy must stay below 2.1.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx
import pytest
import yaml
from packaging.version import Version

from dialogbench.run.registry import open_lake
from tests.e2e.conftest import REPO, cli_env
from tests.e2e.prefect_server import PREFECT, free_port, kill, spawn, tail, wait_healthy

POOL, FLOW, DEPLOYMENT = "schedule-test", "dialogbench", "every-10s"
INTERVAL_S = 10
BULK_DML_ERROR = "Can't evaluate bulk DML statement"


def test_sqlalchemy_below_2_1():
    import sqlalchemy

    assert Version(sqlalchemy.__version__) < Version("2.1"), (
        f"SQLAlchemy {sqlalchemy.__version__}: Prefect 3.7's scheduler fails every loop on SQLAlchemy 2.1 "
        "(\"Can't evaluate bulk DML statement\"), so scheduled deployments never create runs; "
        "pyproject.toml pins sqlalchemy<2.1")


# --- helpers ---------------------------------------------------------------------------------------

def _env(tmp_path: Path, port: int) -> dict[str, str]:
    env = cli_env(tmp_path, temporary=True)
    env.update({
        "PREFECT_API_URL": f"http://127.0.0.1:{port}/api",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",  # no network in CI
        "PREFECT_SERVER_UI_ENABLED": "false",
        # Scheduler: loop every 2 s (default 60; the "recent deployments" loop is 5 s by default) and keep
        # only one or two runs ahead instead of >= 3 runs / >= 1 hour (that would be 360 runs at 10 s).
        # The two *_SCHEDULED_TIME settings are plain `timedelta`s: an ISO 8601 duration, not seconds.
        "PREFECT_SERVER_SERVICES_SCHEDULER_LOOP_SECONDS": "2",
        "PREFECT_SERVER_SERVICES_SCHEDULER_RECENT_DEPLOYMENTS_LOOP_SECONDS": "2",
        "PREFECT_SERVER_SERVICES_SCHEDULER_MIN_RUNS": "1",
        "PREFECT_SERVER_SERVICES_SCHEDULER_MAX_RUNS": "2",
        "PREFECT_SERVER_SERVICES_SCHEDULER_MIN_SCHEDULED_TIME": "PT0S",
        "PREFECT_SERVER_SERVICES_SCHEDULER_MAX_SCHEDULED_TIME": "PT1M",
        # Worker: poll every 2 s (default 10), look 5 s ahead.
        "PREFECT_WORKER_QUERY_SECONDS": "2",
        "PREFECT_WORKER_PREFETCH_SECONDS": "5",
    })
    return env


def _prefect(args: list[str], env: dict[str, str]) -> str:
    done = subprocess.run([PREFECT, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, f"prefect {' '.join(args)}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return done.stdout


def _write_prefect_file(tmp_path: Path, config: Path) -> Path:
    """A prefect.yaml like the project's, but with an interval schedule and the scripted config."""
    spec = {
        "name": "dialogbench-schedule-test",
        "prefect-version": "3.7.7",
        "pull": [{"prefect.deployments.steps.set_working_directory": {"directory": str(REPO)}}],
        "deployments": [{
            "name": DEPLOYMENT,
            "entrypoint": "flows/pipeline.py:pipeline",
            "parameters": {"config_path": str(config)},
            "schedules": [{"interval": INTERVAL_S, "active": True}],
            "work_pool": {"name": POOL},
        }],
    }
    path = tmp_path / "prefect.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def _flow_runs(api: str, deployment_id: str) -> list[dict]:
    body = {"flow_runs": {"deployment_id": {"any_": [deployment_id]}}, "sort": "EXPECTED_START_TIME_ASC"}
    response = httpx.post(f"{api}/flow_runs/filter", json=body, timeout=10)
    response.raise_for_status()
    return response.json()


def _by_scheduler(run: dict) -> bool:
    """Only the scheduler service (`_generate_scheduled_flow_runs`) sets these on a flow run."""
    return (run["auto_scheduled"] and (run.get("created_by") or {}).get("type") == "SCHEDULE"
            and "auto-scheduled" in run["tags"])


def _wait_scheduled_run_completed(api: str, deployment_id: str, server_log: Path, worker_log: Path,
                                  timeout: float) -> dict:
    """Poll until a scheduler-made run of the deployment completes; fail early if a run fails or the
    server logs the SQLAlchemy 2.1 scheduler error."""
    def failure(why: str, runs: list[dict]) -> str:
        listing = "\n".join(f"{r['name']}: {r['state_type']} auto_scheduled={r['auto_scheduled']} "
                            f"created_by={r.get('created_by')}" for r in runs) or "(no flow runs)"
        return f"{why}\n{listing}\n{tail(server_log)}\n{tail(worker_log)}"

    deadline, runs = time.monotonic() + timeout, []
    while time.monotonic() < deadline:
        try:
            runs = _flow_runs(api, deployment_id)
        except httpx.HTTPError:  # a slow answer on a loaded machine: ask again
            runs = []
        for run in runs:
            if _by_scheduler(run) and run["state_type"] == "COMPLETED":
                return run
            if run["state_type"] in ("FAILED", "CRASHED"):
                pytest.fail(failure(f"flow run {run['name']} {run['state_type']}", runs))
        if BULK_DML_ERROR in server_log.read_text(errors="replace"):
            pytest.fail(failure(f"the scheduler fails: {BULK_DML_ERROR!r} (SQLAlchemy >= 2.1?)", runs))
        time.sleep(1)
    pytest.fail(failure(f"no scheduler-created run of {FLOW}/{DEPLOYMENT} completed within {timeout:.0f}s", runs))


# --- the end-to-end test ---------------------------------------------------------------------------

@pytest.mark.slow
def test_interval_schedule_creates_and_runs_the_pipeline(tmp_path, scripted_config):
    config = scripted_config(limit=2, n=(4,))
    port = free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = _env(tmp_path, port)
    server_log, worker_log = tmp_path / "server.log", tmp_path / "worker.log"
    procs: list[subprocess.Popen] = []
    try:
        procs.append(spawn([PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port)],
                            env, server_log))
        wait_healthy(api, procs[0], server_log)

        _prefect(["work-pool", "create", POOL, "--type", "process"], env)
        out = _prefect(["--no-prompt", "deploy", "--all", "--prefect-file",
                        str(_write_prefect_file(tmp_path, config))], env)
        assert f"{FLOW}/{DEPLOYMENT}" in out, out[-2000:]
        deployment = httpx.get(f"{api}/deployments/name/{FLOW}/{DEPLOYMENT}", timeout=10).json()
        assert [s["schedule"].get("interval") for s in deployment["schedules"]] == [INTERVAL_S]

        # --limit 1: the 10 s schedule never runs two pipelines on the same lake at once.
        procs.append(spawn([PREFECT, "worker", "start", "--pool", POOL, "--type", "process", "--limit", "1",
                             "--install-policy", "never"], env, worker_log))
        run = _wait_scheduled_run_completed(api, deployment["id"], server_log, worker_log, timeout=150)
    finally:
        for proc in reversed(procs):
            kill(proc)

    assert run["state_type"] == "COMPLETED" and run["parameters"]["config_path"] == str(config)

    # The scheduled run wrote the lake under tmp_path: its runs rows (one file per stage) and the catalog.
    lake = tmp_path / "lake"
    rows = open_lake(lake).read("runs").select(["stage", "config"]).to_pylist()
    assert rows, f"no runs rows in {lake}"
    assert {r["config"] for r in rows} == {str(config)}
    assert {"generate:bot-a", "generate:bot-b", "botchat_unieval"} <= {r["stage"] for r in rows}
    assert (lake / "catalog.duckdb").is_file()
