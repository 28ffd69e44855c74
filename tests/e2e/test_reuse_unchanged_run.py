"""``reuse_unchanged_run``: a rerun of a config whose board's latest run already holds its results (config, code and
lake unchanged since, nothing to compute) is answered from that run in seconds, without Prefect; anything that could
change a number makes it a real run again (dialogbench/run/reuse.py)."""

from __future__ import annotations

import json
import os
import time

import pytest
import yaml

from dialogbench.run.registry import load_config, open_lake, run_for
from dialogbench.run.reuse import latest_run, unchanged_run
from tests.e2e.conftest import run_cli

pytestmark = pytest.mark.slow


def test_an_unchanged_rerun_is_answered_from_the_latest_run_and_any_change_runs_again(tmp_path, scripted_config):
    path = scripted_config(limit=4, n=(4,))
    raw = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump({**raw, "reuse_unchanged_run": True}))
    lake = open_lake(tmp_path / "lake")

    first = run_cli(["run", "--config", str(path), "--json", str(tmp_path / "1.json")], tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    ran = json.loads((tmp_path / "1.json").read_text())
    assert sum(s["computed"] for s in ran["stages"]) > 0 and "reused" not in ran

    second = run_cli(["run", "--config", str(path), "--json", str(tmp_path / "2.json")], tmp_path)
    assert second.returncode == 0, second.stderr[-3000:]
    reused = json.loads((tmp_path / "2.json").read_text())
    assert reused["reused"] is True and reused["run_id"] == ran["run_id"]
    assert "nothing to compute" in second.stdout
    assert {s["stage"]: (s["planned"], s["computed"]) for s in reused["stages"]}["generate:bot-a"] == (4, 0)
    assert "UniEval pass@N" in second.stdout and "bot-a" in second.stdout  # every leaderboard, from the lake
    assert reused["report"]["html"] == ran["report"]["html"]
    assert "dialogbench.stage" not in second.stderr
    assert "dialogbench.stage" in first.stderr  # the stages ran in the first run only: no flow at all in the second
    assert latest_run(lake, ran["board"])["run_id"] == ran["run_id"]  # nothing recorded
    assert sorted(p.name for p in (lake.root / "runs").iterdir()) == [f"run_id={ran['run_id']}"]

    # each condition, checked in-process against the same lake: any change is a real run, and says why
    config = load_config(path)
    assert unchanged_run(run_for(config)).run_id == ran["run_id"]
    other = load_config(path, {"limit": 3})
    assert unchanged_run(run_for(other)).run_id is None  # another board (demo+limit=3): no run there yet
    changed = tmp_path / "changed" / "config.yaml"  # the same file name: the same board
    changed.parent.mkdir()
    changed.write_text(yaml.safe_dump({**raw, "reuse_unchanged_run": True, "report": {"min_cells": 3}}))
    assert "config differs" in unchanged_run(run_for(load_config(changed))).reason
    note_path = lake.root / "reports" / "boards" / ran["board"] / "run.json"
    note = json.loads(note_path.read_text())
    note_path.write_text(json.dumps({**note, "code": "another"}))
    assert "other code" in unchanged_run(run_for(config)).reason
    note_path.write_text(json.dumps({**note, "failed": "1 failed cell"}))
    assert "failed" in unchanged_run(run_for(config)).reason
    note_path.write_text(json.dumps(note))
    assert unchanged_run(run_for(config)).run_id == ran["run_id"]

    # another writer's cell (here: a generations file written after the run) makes the next run a real one
    cell = next((lake.root / "generations").rglob("*.parquet"))
    later = time.time() + 5
    os.utime(cell, (later, later))
    assert "the lake changed" in unchanged_run(run_for(config)).reason
    third = run_cli(["run", "--config", str(path), "--json", str(tmp_path / "3.json")], tmp_path)
    assert third.returncode == 0, third.stderr[-3000:]
    again = json.loads((tmp_path / "3.json").read_text())
    assert "reused" not in again and again["run_id"] != ran["run_id"]
    assert "a new run: the lake changed after its latest run" in third.stderr

    # ... and --rerun records a run however unchanged
    fourth = run_cli(["run", "--config", str(path), "--rerun", "--json", str(tmp_path / "4.json")], tmp_path)
    assert fourth.returncode == 0, fourth.stderr[-3000:]
    assert json.loads((tmp_path / "4.json").read_text())["run_id"] not in (ran["run_id"], again["run_id"])
