"""A run killed with SIGKILL mid-generation or mid-judging, then rerun, completes cleanly."""

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
from tests.e2e.conftest import REPO, cli_env, polled_glob, run_cli
from tests.verdicts import verdicts

pytestmark = pytest.mark.slow


def _start(config: Path, tmp_path: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "dialogbench.cli", "run", "--config", str(config)], cwd=REPO,
                            env=cli_env(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def _kill_when(proc: subprocess.Popen, ready, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert proc.poll() is None, "the run ended before the kill point"
        assert time.monotonic() < deadline, "kill point never reached"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the CLI and its Prefect server, no clean-up
    proc.wait()


def _assert_complete(lake: Lake, *, generations: int, judgments: int) -> None:
    for path in lake.root.rglob("*.parquet"):
        pq.read_table(path)  # every file is whole
    assert not list(lake.root.rglob("*.parquet.tmp"))
    assert lake.read("generations").num_rows == generations  # no cell lost, none twice
    assert len(verdicts(lake)) == judgments
    assert data_tests(lake) == {}


@pytest.mark.parametrize("kill_point", ["generation", "judging"])
def test_sigkill_then_rerun_completes(tmp_path, scripted_config, kill_point):
    config = scripted_config(limit=20, n=(8,), delay=0.4, chunk=4)
    if kill_point == "judging":  # at 0.4 s a call, a run under make test's load once ended between two looks
        raw = yaml.safe_load(config.read_text())
        raw["judges"][0]["script_delay_s"] = 2.0
        config.write_text(yaml.safe_dump(raw))
    lake = open_lake(tmp_path / "lake")
    proc = _start(config, tmp_path)
    if kill_point == "generation":
        # bot-b is generating (bot-a's dialogues are stored) and has checkpointed a step
        _kill_when(proc, lambda: len(lake.files("generations")) == 1 and bool(polled_glob(lake.root, "_state/*/bot-b-*")))
        assert lake.read("generations").num_rows == 20
    else:  # the judge's chunks run at once: 2 s a call keeps them in flight long enough to be seen under load
        _kill_when(proc, lambda: 1 <= len(lake.files("unieval_judgments")) < 10)
        assert 0 < len(verdicts(lake)) < 40

    rerun = run_cli(["run", "--config", str(config)], tmp_path)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    _assert_complete(lake, generations=40, judgments=40)
    if kill_point == "generation":
        assert "resuming" in rerun.stderr + rerun.stdout  # from the step checkpoint, not from scratch
