"""A run killed with SIGKILL mid-generation, then rerun and killed again mid-judging, then rerun, completes cleanly;
and a run killed while it holds the lake lease frees the lake at once (no stale lease to wait for or clear).

One lake serves both kill points and the lease (a `dialogbench run` costs ~15 s of CPU): the rerun after the kill
mid-generation resumes from its step checkpoint and is itself the run killed mid-judging, whose rerun completes the
lake. Every run in it starts on a lake whose last holder was killed, and each is seen not to wait for it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from dialogbench.run.registry import open_lake
from dialogbench.lake import Lake
from dialogbench.lake.catalog import data_tests
from dialogbench.lake.lease import holder
from tests.e2e.conftest import REPO, cli_env, polled_glob, run_cli
from tests.e2e.test_overlapping_runs import duplicates
from tests.verdicts import verdicts

pytestmark = pytest.mark.slow

QUEUED = "is being written by"  # what a run says when it finds the lease held (it waits, or is refused)


def _start(config: Path, tmp_path: Path, log: Path) -> subprocess.Popen:
    """The run in its own process group, its stdout and stderr written to ``log`` as it goes (PYTHONUNBUFFERED):
    what it printed before it was killed is kept."""
    env = cli_env(tmp_path)
    # Prefect's thread pool is unbounded: all ten judge chunks would be in flight at once and commit within the
    # same instant (a CI run once ended between two looks). Two at a time leaves seconds between the first commit
    # and the last.
    env["PREFECT_TASK_RUNNER_THREAD_POOL_MAX_WORKERS"] = "2"
    with log.open("w") as out:
        return subprocess.Popen([sys.executable, "-m", "dialogbench.cli", "run", "--config", str(config)], cwd=REPO,
                                env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def _kill_when(proc: subprocess.Popen, ready, log: Path, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert proc.poll() is None, f"the run ended before the kill point\n{log.read_text()[-3000:]}"
        assert time.monotonic() < deadline, "kill point never reached"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the CLI and its Prefect server, no clean-up
    proc.wait()


def _assert_complete(lake: Lake, *, generations: int, judgments: int) -> None:
    for path in lake.root.rglob("*.parquet"):
        pq.read_table(path)  # every file is whole
    assert not list(lake.root.rglob("*.parquet.tmp"))
    assert lake.read("generations").num_rows == generations  # no cell lost, none twice
    assert duplicates(lake) == {"generations": 0, "unieval_judgments": 0}
    assert len(verdicts(lake)) == judgments
    assert data_tests(lake) == {}


def test_sigkill_mid_generation_then_mid_judging_then_rerun_completes(tmp_path, scripted_config):
    config = scripted_config(limit=20, n=(8,), delay=0.4, chunk=4)
    # the judge's chunks run at once: 2 s a call keeps them in flight long enough to be seen under make test's load
    # (at 0.4 s a call, a run once ended between two looks)
    raw = yaml.safe_load(config.read_text())
    raw["judges"][0]["script_delay_s"] = 2.0
    config.write_text(yaml.safe_dump(raw))
    lake = open_lake(tmp_path / "lake")

    # mid-generation: bot-b is generating (bot-a's dialogues are stored) and has checkpointed a step
    log = tmp_path / "generation.log"
    proc = _start(config, tmp_path, log)
    _kill_when(proc, lambda: len(lake.files("generations")) == 1 and bool(polled_glob(lake.root, "_state/*/bot-b-*")),
               log)
    assert lake.read("generations").num_rows == 20
    assert holder(lake.root)["pid"] == proc.pid  # killed holding the lease: its holder note is still there

    # mid-judging, in the rerun: it took the lease at once and resumed bot-b from its step checkpoint
    log = tmp_path / "judging.log"
    proc = _start(config, tmp_path, log)
    _kill_when(proc, lambda: 1 <= len(lake.files("unieval_judgments")) < 10, log)
    assert 0 < len(verdicts(lake)) < 40
    assert holder(lake.root)["pid"] == proc.pid
    said = log.read_text()
    assert "resuming" in said  # from the step checkpoint, not from scratch
    assert QUEUED not in said

    rerun = run_cli(["run", "--config", str(config)], tmp_path)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert QUEUED not in rerun.stderr  # no stale lease to wait for or clear by hand
    _assert_complete(lake, generations=40, judgments=40)
