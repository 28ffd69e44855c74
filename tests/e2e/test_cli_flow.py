"""The user's path: `dialogbench run` (the Prefect flow, on the e2e session's Prefect server), rerun, a rerun answered
from the latest run (``reuse_unchanged_run``, dialogbench/run/reuse.py), ad-hoc SQL on the lake; the command line's
overrides, and a config error that stops before any compute.

The first test's four runs share one lake: each `dialogbench run` costs ~15 s of CPU before it computes anything
(Python, Prefect, the flow, the catalog, the report), and a run, a rerun that computes nothing, the Arena/GTEval/Elo
tables and the reuse of an unchanged run are all properties of the same scripted config with every botchat protocol
on. So one config (``reuse_unchanged_run`` set) is run: first (every cell computed), with ``--rerun`` (a run is
recorded though reuse would have answered it, and it computes nothing), plainly (answered from the ``--rerun``'s run,
without Prefect), and, after the lake is written to, once more (a real run again). Whatever only the unchanged lake
shows (the catalog, `dialogbench query`, each reuse condition checked in-process) is checked before that write.
The narrowed run and the config error check other configs: each keeps a lake of its own."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
import yaml

from dialogbench.lake import Lake
from dialogbench.lake.schemas import FAILURES
from dialogbench.run.registry import load_config, open_lake, run_for
from dialogbench.run.reuse import latest_run, unchanged_run
from tests.e2e.conftest import run_cli

pytestmark = pytest.mark.slow


def _computed(summary: dict) -> dict[str, tuple[int, int, int]]:
    return {s["stage"]: (s["planned"], s["cached"], s["computed"]) for s in summary["stages"]}


def _run(config: Path, tmp_path: Path, name: str, *flags: str) -> tuple[subprocess.CompletedProcess, dict]:
    """`dialogbench run` of ``config`` (exit 0 asserted) and the summary its ``--json`` wrote to ``name``."""
    done = run_cli(["run", "--config", str(config), *flags, "--json", str(tmp_path / name)], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    return done, json.loads((tmp_path / name).read_text())


def _check_first_run(done: subprocess.CompletedProcess, summary: dict, lake: Path) -> None:
    """A new lake: every cell of every protocol is computed, the leaderboards printed, the report written."""
    stages = _computed(summary)
    assert sum(computed for _, _, computed in stages.values()) > 0 and "reused" not in summary
    assert stages["generate:bot-a"] == (4, 0, 4)
    assert stages["generate:bot-b"] == (4, 0, 4)
    assert stages["botchat_unieval"] == (8, 0, 8)
    assert stages["botchat_arena"] == (8, 0, 8)     # 4 seeds x 1 pair x 2 orders at N = 6
    assert stages["botchat_gteval"] == (16, 0, 16)  # 4 seeds x 2 models x 2 orders
    assert stages["botchat_elo"][2] == 1            # one (judge, N) rated
    assert stages["botchat_lengths"] == (8, 0, 8)
    assert "UniEval pass@N" in done.stdout and "bot-a" in done.stdout
    assert "dialogbench.stage" in done.stderr  # the stages ran in the flow (a reused run has no flow at all)
    html = (lake / "reports" / "report.html").read_text()
    assert "bot-a" in html and "bot-b" in html
    # the run's end compacted each Delta table of more than 2 files (lake_upkeep), then built the catalog on them
    assert "lake upkeep: compacted" in done.stderr
    opened = open_lake(lake)
    assert max(len(opened.files(table)) for table in opened.layout.tables) <= 2


def _check_rerun(done: subprocess.CompletedProcess, summary: dict, first: dict) -> None:
    """``--rerun`` of an unchanged config: a run is recorded however unchanged, and it computes nothing (Elo's
    ratings included: same games, same settings)."""
    assert "reused" not in summary and summary["run_id"] != first["run_id"]
    stages = _computed(summary)
    assert stages["generate:bot-a"] == (4, 4, 0)
    assert stages["botchat_unieval"] == (8, 8, 0)
    assert "cached      4  computed      0" in done.stdout
    assert stages["botchat_arena"] == (8, 8, 0) and stages["botchat_gteval"] == (16, 16, 0)
    assert stages["botchat_elo"] == (1, 1, 0)


def _check_reused(done: subprocess.CompletedProcess, summary: dict, latest: dict, lake: Lake,
                  recorded: list[str]) -> None:
    """A plain rerun of the unchanged config is answered from the board's latest run: no flow, nothing recorded."""
    assert summary["reused"] is True and summary["run_id"] == latest["run_id"]
    assert "nothing to compute" in done.stdout
    assert {s["stage"]: (s["planned"], s["computed"]) for s in summary["stages"]}["generate:bot-a"] == (4, 0)
    assert "UniEval pass@N" in done.stdout and "bot-a" in done.stdout  # every leaderboard, from the lake
    assert summary["report"]["html"] == latest["report"]["html"]
    assert "dialogbench.stage" not in done.stderr
    assert latest_run(lake, latest["board"])["run_id"] == latest["run_id"]  # nothing recorded
    assert sorted(set(lake.read("runs").column("run_id").to_pylist())) == sorted(recorded)


def _check_catalog(tmp_path: Path, lake: Path) -> None:
    """Plain DuckDB on the catalog file answers ad-hoc SQL through the views, and so does `dialogbench query`."""
    with duckdb.connect(str(lake / "catalog.duckdb"), read_only=True) as con:
        rows = con.sql("select model, n, dialogues, passed, unparsed, unparsed_passed from botchat_unieval "
                       "where n = 6 order by model").fetchall()
        runs = con.sql("select count(distinct run_id) from runs").fetchall()[0][0]
        # built after each run's last commit, its history snapshot included (a Delta lake's catalog names its files)
        snapshots = con.sql("select count(distinct run_id) from metric_history").fetchall()[0][0]
        elo = con.sql("select model, games from botchat_elo order by model").fetchall()
        gt = con.sql("select model, comparisons from botchat_gteval order by model").fetchall()
    # the judge script cycles Yes@4 / No / garbage / an arena answer, and the 8 dialogues are judged in one chunk:
    # 2 of each; "No" passes at N = 6; the garbage and the arena answer are unparseable UniEval verdicts with no
    # Index line, which pass by the authors' rule (their notebook's default index): 2 + 4 passes, 4 of them unparsed.
    assert sum(r[2] for r in rows) == 8 and sum(r[4] for r in rows) == 4
    assert sum(r[3] for r in rows) == 6 and sum(r[5] for r in rows) == 4
    assert runs == 2 and snapshots == 2  # the first run and the --rerun; the reused run recorded nothing
    assert [m for m, _ in elo] == ["bot-a", "bot-b"] and all(g > 0 for _, g in elo)
    assert gt == [("bot-a", 8), ("bot-b", 8)]

    query = run_cli(["query", "select count(*) as n from generations", "--lake", str(lake), "--format", "json"],
                    tmp_path)
    assert json.loads(query.stdout) == [{"n": 8}]


def _check_reuse_conditions(tmp_path: Path, path: Path, raw: dict, lake: Lake, latest: dict) -> None:
    """Each condition of a reuse, checked in-process against the lake: any change is a real run, and says why."""
    config = load_config(path)
    assert unchanged_run(run_for(config)).run_id == latest["run_id"]
    other = load_config(path, {"limit": 3})
    assert unchanged_run(run_for(other)).run_id is None  # another board (config+limit=3): no run there yet
    changed = tmp_path / "changed" / "config.yaml"  # the same file name: the same board
    changed.parent.mkdir()
    changed.write_text(yaml.safe_dump({**raw, "reuse_unchanged_run": True, "report": {"min_cells": 3}}))
    assert "config differs" in unchanged_run(run_for(load_config(changed))).reason
    note_path = lake.root / "reports" / "boards" / latest["board"] / "run.json"
    note = json.loads(note_path.read_text())
    note_path.write_text(json.dumps({**note, "code": "another"}))
    assert "other code" in unchanged_run(run_for(config)).reason
    note_path.write_text(json.dumps({**note, "failed": "1 failed cell"}))
    assert "failed" in unchanged_run(run_for(config)).reason
    note_path.write_text(json.dumps(note))
    assert unchanged_run(run_for(config)).run_id == latest["run_id"]


def test_run_rerun_reuse_query_and_a_changed_lake_on_one_lake(tmp_path, scripted_config):
    """One lake, four runs of one config (module docstring): the first computes every cell of UniEval, Arena, GTEval,
    Elo and the lengths and writes the report; ``--rerun`` records a run that computes nothing; a plain rerun is
    answered from that run without Prefect; the catalog and `dialogbench query` answer SQL; each reuse condition
    holds in-process; then another writer's cell makes the next run a real one again."""
    path = scripted_config(limit=4, n=(4, 6), comparisons=True)
    raw = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump({**raw, "reuse_unchanged_run": True, "lake_upkeep": {"compact_above_files": 2}}))
    lake = open_lake(tmp_path / "lake")

    first_done, first = _run(path, tmp_path, "1.json")
    _check_first_run(first_done, first, lake.root)
    rerun_done, rerun = _run(path, tmp_path, "2.json", "--rerun")
    _check_rerun(rerun_done, rerun, first)
    reused_done, reused = _run(path, tmp_path, "3.json")
    _check_reused(reused_done, reused, rerun, lake, [first["run_id"], rerun["run_id"]])
    _check_catalog(tmp_path, lake.root)
    _check_reuse_conditions(tmp_path, path, raw, lake, rerun)

    # another writer's commit after the run (here: a failure row of another run; a Delta lake's log says when each
    # writer committed) makes the next run a real one; a compaction, which changes no row, does not
    assert run_cli(["compact", "--lake", str(lake.root)], tmp_path).returncode == 0
    assert unchanged_run(run_for(load_config(path))).run_id == rerun["run_id"]
    lake.write("failures", pa.Table.from_pylist([{"cell_key": "c", "stage": "s", "error": "e", "run_id": "other"}],
                                                schema=FAILURES), partition={"stage": "s"})
    assert "the lake changed" in unchanged_run(run_for(load_config(path))).reason
    assert "failures" in unchanged_run(run_for(load_config(path))).reason
    again_done, again = _run(path, tmp_path, "4.json")
    assert "reused" not in again and again["run_id"] not in (first["run_id"], rerun["run_id"])
    assert "a new run: the lake changed after its latest run" in again_done.stderr


def test_limit_and_models_flags_override_config(tmp_path, scripted_config):
    """--limit narrows the config's limit; --models keeps one model, so the Arena (every pair of two models) has
    nothing to play: it is off for the run, and the run says so once (the CLI and the flow both load the config)."""
    config = scripted_config(limit=6, comparisons=True)
    result = run_cli(["run", "--config", str(config), "--limit", "2", "--models", "bot-b", "--n", "4",
                      "--json", str(tmp_path / "s.json")], tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    stages = _computed(json.loads((tmp_path / "s.json").read_text()))
    assert "generate:bot-a" not in stages and "botchat_arena" not in stages
    assert stages["generate:bot-b"] == (2, 0, 2)
    assert stages["botchat_unieval"] == (2, 0, 2)
    assert result.stderr.count("--models bot-b: turned off for this run: botchat.arena") == 1


def test_config_error_stops_before_compute(tmp_path, scripted_config):
    config = scripted_config()
    data = yaml.safe_load(config.read_text())
    data["models"][0]["backend"] = "nosuch"
    config.write_text(yaml.safe_dump(data))
    result = run_cli(["run", "--config", str(config)], tmp_path, timeout=120)
    assert result.returncode == 2
    assert "models[0].backend" in result.stderr and "unknown backend 'nosuch'" in result.stderr
    assert not (tmp_path / "lake").exists()
