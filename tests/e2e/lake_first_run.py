"""What the lake tests (test_lake_integrity.py, test_lake_files.py) share: a `dialogbench run` that reports its
stages, a `dialogbench query`, and the first run of a config that each test then damages, made once per module.

Each test starts from the lake of one clean run of the same scripted config and then damages it its own way. A run
costs ~10-20 CPU seconds (Python, Prefect, the catalog, the report), so the module's first test to ask makes that
run in its own lake, which is kept aside; the others get a copy of it in theirs (a lake reads through paths relative
to its root, so a copy at another place is the same lake: the same cells, cached)."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from dialogbench.lake import Lake
from tests.e2e.conftest import run_cli

Stages = dict[str, tuple[int, int]]


def run(config: Path, tmp_path: Path, name: str) -> tuple[subprocess.CompletedProcess, Stages]:
    """`dialogbench run` of ``config``, and (when it passed) each stage's (cached, computed) cells from its
    ``--json`` summary (written to ``tmp_path / name``)."""
    done = run_cli(["run", "--config", str(config), "--json", str(tmp_path / name)], tmp_path)
    if done.returncode:
        return done, {}
    stages = json.loads((tmp_path / name).read_text())["stages"]
    return done, {s["stage"]: (s["cached"], s["computed"]) for s in stages}


def query(sql: str, lake: Lake, tmp_path: Path) -> list[dict]:
    """`dialogbench query` of ``sql`` on ``lake``, which must pass: its rows."""
    done = run_cli(["query", sql, "--lake", str(lake.root), "--format", "json"], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@dataclass
class FirstRuns:
    """A module's clean first runs, one per config (its ``lake`` aside), kept under ``folder``."""

    folder: Path
    made: dict[str, tuple[subprocess.CompletedProcess, Stages, Path]] = field(default_factory=dict)

    def __call__(self, config: Path, tmp_path: Path, name: str) -> tuple[subprocess.CompletedProcess, Stages]:
        """A first run of ``config`` into its (absent) lake: the run itself the first time its config is asked
        for in this module, else a copy of that run's lake and that run's result (a failed run is not kept)."""
        data = yaml.safe_load(config.read_text())
        lake = Path(data.pop("lake"))
        key = json.dumps(data, sort_keys=True)
        if key in self.made:
            done, stages, kept = self.made[key]
            shutil.copytree(kept, lake, symlinks=True)
            return done, stages
        done, stages = run(config, tmp_path, name)
        if done.returncode == 0:
            kept = self.folder / f"lake-{len(self.made)}"
            shutil.copytree(lake, kept, symlinks=True)
            self.made[key] = done, stages, kept
        return done, stages


@pytest.fixture(scope="module")
def first_run(tmp_path_factory) -> FirstRuns:
    """``first_run(config, tmp_path, name)``: a clean run of ``config`` (made once per module, copied after)."""
    return FirstRuns(tmp_path_factory.mktemp("first-runs"))
