"""The user's path: `dialogbench run` (Prefect flow on the temporary local API), rerun, query."""

from __future__ import annotations

import json

import duckdb
import pytest
import yaml

from tests.e2e.conftest import run_cli

pytestmark = pytest.mark.slow


def _computed(summary: dict) -> dict[str, tuple[int, int, int]]:
    return {s["stage"]: (s["planned"], s["cached"], s["computed"]) for s in summary["stages"]}


def test_run_then_rerun_computes_nothing(tmp_path, scripted_config):
    config = scripted_config(limit=6, n=(4, 6))
    first = run_cli(["run", "--config", str(config), "--json", str(tmp_path / "1.json")], tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    stages = _computed(json.loads((tmp_path / "1.json").read_text()))
    assert stages["generate:bot-a"] == (6, 0, 6)
    assert stages["generate:bot-b"] == (6, 0, 6)
    assert stages["botchat_unieval"] == (12, 0, 12)
    assert "UniEval pass@N" in first.stdout and "bot-a" in first.stdout

    second = run_cli(["run", "--config", str(config), "--json", str(tmp_path / "2.json")], tmp_path)
    assert second.returncode == 0, second.stderr[-3000:]
    stages = _computed(json.loads((tmp_path / "2.json").read_text()))
    assert stages["generate:bot-a"] == (6, 6, 0)
    assert stages["botchat_unieval"] == (12, 12, 0)
    assert "cached      6  computed      0" in second.stdout

    # Plain DuckDB on the catalog file answers ad-hoc SQL through the views.
    with duckdb.connect(str(tmp_path / "lake" / "catalog.duckdb"), read_only=True) as con:
        rows = con.sql("select model, n, dialogues, passed, unparsed, unparsed_passed from botchat_unieval "
                       "where n = 6 order by model").fetchall()
        runs = con.sql("select count(distinct run_id) from runs").fetchall()[0][0]
    # the judge script cycles Yes@4 / No / garbage / an arena answer over 12 dialogues: 3 of each; "No"
    # passes at N = 6; the garbage and the arena answer are unparseable UniEval verdicts with no Index line,
    # which pass by the authors' rule (their notebook's default index): 3 + 6 passes, 6 of them unparsed.
    assert sum(r[2] for r in rows) == 12 and sum(r[4] for r in rows) == 6
    assert sum(r[3] for r in rows) == 9 and sum(r[5] for r in rows) == 6
    assert runs == 2

    query = run_cli(["query", "select count(*) as n from generations", "--lake", str(tmp_path / "lake"),
                     "--format", "json"], tmp_path)
    assert json.loads(query.stdout) == [{"n": 12}]


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


def test_arena_gteval_elo_and_report(tmp_path, scripted_config):
    config = scripted_config(limit=4, n=(4, 6), comparisons=True)
    result = run_cli(["run", "--config", str(config), "--json", str(tmp_path / "s.json")], tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads((tmp_path / "s.json").read_text())
    stages = _computed(summary)
    assert stages["botchat_arena"] == (8, 0, 8)     # 4 seeds x 1 pair x 2 orders at N = 6
    assert stages["botchat_gteval"] == (16, 0, 16)  # 4 seeds x 2 models x 2 orders
    assert stages["botchat_elo"][2] == 1            # one (judge, N) rated
    assert stages["botchat_lengths"] == (8, 0, 8)
    html = (tmp_path / "lake" / "reports" / "report.html").read_text()
    assert "bot-a" in html and "bot-b" in html
    with duckdb.connect(str(tmp_path / "lake" / "catalog.duckdb"), read_only=True) as con:
        elo = con.sql("select model, games from botchat_elo order by model").fetchall()
        gt = con.sql("select model, comparisons from botchat_gteval order by model").fetchall()
    assert [m for m, _ in elo] == ["bot-a", "bot-b"] and all(g > 0 for _, g in elo)
    assert gt == [("bot-a", 8), ("bot-b", 8)]

    again = run_cli(["run", "--config", str(config), "--json", str(tmp_path / "t.json")], tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    stages = _computed(json.loads((tmp_path / "t.json").read_text()))
    assert stages["botchat_arena"] == (8, 8, 0) and stages["botchat_gteval"] == (16, 16, 0)
    assert stages["botchat_elo"] == (1, 1, 0)  # same games, same settings: the ratings are not recomputed
