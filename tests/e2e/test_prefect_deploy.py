"""prefect.yaml is accepted by `prefect deploy`: the three deployments register, the nightly one with its
cron schedule and config parameter, the dispatched work's on its GPU pool (against Prefect's temporary local API in a private PREFECT_HOME)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import REPO, cli_env

pytestmark = pytest.mark.slow
PREFECT = str(Path(sys.executable).parent / "prefect")


def _prefect(args: list[str], tmp_path: Path) -> str:
    env = cli_env(tmp_path, temporary=True)
    env["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] = "180"
    done = subprocess.run([PREFECT, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"prefect {' '.join(args)}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return done.stdout


def test_prefect_deploy_accepts_prefect_yaml(tmp_path):
    for pool in ("dialogbench", "dialogbench-gpu"):
        _prefect(["work-pool", "create", pool, "--type", "process"], tmp_path)
    out = _prefect(["--no-prompt", "deploy", "--all"], tmp_path)
    assert "dialogbench/nightly" in out and "dialogbench/adhoc" in out and "dialogbench-work/gpu" in out
    work = _prefect(["deployment", "inspect", "dialogbench-work/gpu"], tmp_path)
    assert "flows/work.py:work" in work and "dialogbench-gpu" in work
    nightly = _prefect(["deployment", "inspect", "dialogbench/nightly"], tmp_path)
    assert "0 1 * * *" in nightly and "configs/nightly.yaml" in nightly
    adhoc = _prefect(["deployment", "inspect", "dialogbench/adhoc"], tmp_path)
    assert "configs/demo.yaml" in adhoc
