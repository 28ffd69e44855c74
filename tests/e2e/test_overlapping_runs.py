"""Runs that overlap on one lake are safe: the lake lease lets one run write at a time. A second run started
with ``--wait`` queues behind the first and then computes only the cells it still lacks (two configs that
share cells), one without it is refused naming the holder. Real CLI processes, scripted models.

That a run killed while holding the lease frees the lake at once is checked in tests/e2e/test_kill_resume.py, on the
runs it kills and reruns there: a killed holder of its own here cost two more `dialogbench run`s (~30 s of CPU).
``computed`` and ``duplicates`` are shared with other e2e files."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from dialogbench.run.registry import open_lake
from dialogbench.lake import Lake
from dialogbench.lake.catalog import data_tests
from dialogbench.lake.lease import holder
from tests.e2e.conftest import REPO, cli_env, run_cli
from tests.verdicts import verdicts

pytestmark = pytest.mark.slow


def start(config: Path, tmp_path: Path, *args: str, summary: Path | None = None) -> subprocess.Popen:
    extra = ["--json", str(summary)] if summary else []
    return subprocess.Popen([sys.executable, "-m", "dialogbench.cli", "run", "--config", str(config), *extra, *args],
                            cwd=REPO, env=cli_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def wait_for_holder(lake: Lake, proc: subprocess.Popen, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while holder(lake.root).get("pid") != proc.pid:
        assert proc.poll() is None, f"the first run ended before it was seen holding the lease: {proc.stderr.read()}"
        assert time.monotonic() < deadline, "the first run never took the lease"
        time.sleep(0.05)
    return holder(lake.root)


def duplicates(lake: Lake) -> dict[str, int]:
    """Rows beyond one per cell key, per computed table, as its readers read it (a Delta table's committed files:
    a killed writer's uncommitted ones are not the table's, until ``vacuum`` deletes them)."""
    found = {}
    with duckdb.connect() as con:
        for table, key in (("generations", "cell_key"), ("unieval_judgments", "cell_key")):
            total, distinct = con.sql(f"SELECT count(*), count(DISTINCT {key}) FROM "
                                      f"{lake.relation_sql(table)}").fetchall()[0]
            found[table] = total - distinct
    return found


def computed(summary: Path) -> dict[str, int]:
    return {s["stage"]: s["computed"] for s in json.loads(summary.read_text())["stages"]}


def test_overlapping_runs_of_two_configs_store_every_cell_once(tmp_path, scripted_config):
    small = scripted_config(limit=4, n=(6,), delay=0.2, name="small.yaml")
    large = scripted_config(limit=6, n=(6,), name="large.yaml")  # shares the small run's 4 seeds
    lake = open_lake(tmp_path / "lake")
    first = start(small, tmp_path, summary=tmp_path / "first.json")
    note = wait_for_holder(lake, first)

    refused = run_cli(["run", "--config", str(small)], tmp_path, temporary=True)  # no --wait: refused before Prefect
    assert refused.returncode == 3, refused.stderr[-2000:]
    assert f"pid {first.pid}" in refused.stderr and f"since {note['since']}" in refused.stderr
    assert "--wait" in refused.stderr and "Traceback" not in refused.stderr
    assert "Starting temporary server" not in refused.stdout + refused.stderr

    second = start(large, tmp_path, "--wait", "600", summary=tmp_path / "second.json")
    first_out = first.communicate(timeout=600)
    second_out = second.communicate(timeout=600)
    assert first.returncode == 0, first_out[1][-3000:]
    assert second.returncode == 0, second_out[1][-3000:]
    assert "is being written by" in second_out[1] and f"pid {first.pid}" in second_out[1]  # it queued

    assert computed(tmp_path / "first.json")["generate:bot-a"] == 4
    assert computed(tmp_path / "second.json")["generate:bot-a"] == 2  # only the seeds the first run lacked
    assert duplicates(lake) == {"generations": 0, "unieval_judgments": 0}
    assert lake.read("generations").num_rows == 12 and len(verdicts(lake)) == 12
    assert data_tests(lake) == {}
