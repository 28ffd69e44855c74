"""What the dispatch tests (``test_dispatch.py``: a work pool; ``test_dispatch_box.py``: one box's GPUs) share: their
config (scripted models with a delay per call standing in for engines), the cell keys a lake holds, and the run on
one process that a dispatched run's cells are compared with.

That baseline (``alone_lake``) is one run for the whole test session: both files compare with the same config on one
process, and a `dialogbench run` costs ~10 s of CPU. Under pytest-xdist the two files run on different workers, so
the first to need it makes it, under a file lock in the session's shared temporary folder, and the other waits for
it and reads the same lake (it only reads it)."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import yaml

from tests.e2e.conftest import REPO, cli_env

POOL_DEPLOYMENT = "dialogbench-work/test"  # ``deploy_work(..., name="test")``: what a pool config's dispatch names


def config(tmp_path: Path, name: str, *, delay: float, dispatch: bool, limit: int = 3,
           dead_after_s: float = 15, task_workers: bool = False) -> Path:
    """``tmp_path/<name>.yaml``: two scripted chatbots and a scripted judge on BotChat and one MT-Bench-101 task, its
    lake ``tmp_path/lake-<name>``; with ``dispatch``, its units sent to the test pool's deployment, or, with
    ``task_workers``, to task workers."""
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
        data["dispatch"] = {"dead_after_s": dead_after_s, "poll_s": 1,
                            **({"task_workers": True} if task_workers else {"deployment": POOL_DEPLOYMENT})}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def cells(lake: Path) -> dict[str, list]:
    """Every computed cell key of the model work and the judging, from the lake's committed rows (duplicates kept):
    a folder lake's recorded files, a Delta lake's latest versions."""
    from dialogbench.run.registry import open_lake

    opened = open_lake(lake)
    return {table: sorted(opened.read(table).column("cell_key").to_pylist())
            for table in ("generations", "mtbench101_answers", "unieval_judgments", "mtbench101_judgments")}


def alone_lake(tmp_path_factory: pytest.TempPathFactory, *, env: dict[str, str] | None = None) -> Path:
    """The lake of ``config(..., "alone", delay=0, dispatch=False)`` run on one process, made once per test session:
    the first caller runs it (with ``env``, a Prefect server the caller has running, else the session's), later ones
    (another xdist worker too) wait on the lock and reuse it. A failed run is not kept: each caller then runs it
    again and fails with its output."""
    base = tmp_path_factory.getbasetemp()
    # under xdist each worker's basetemp is a folder of the session's (popen-gwN); alone, the session's own
    shared = base.parent if base.name.startswith("popen-gw") else base
    folder, done = shared / "dispatch-alone", shared / "dispatch-alone.done"
    with open(shared / "dispatch-alone.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or the process dies
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a failed attempt left: this one starts afresh
            folder.mkdir()
            path = config(folder, "alone", delay=0.0, dispatch=False)
            run = subprocess.run([sys.executable, "-m", "dialogbench.cli", "run", "--config", str(path)], cwd=REPO,
                                 env=env or cli_env(folder), capture_output=True, text=True, timeout=600)
            assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
            done.touch()
    return folder / "lake-alone"
