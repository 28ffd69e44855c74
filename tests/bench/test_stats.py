"""bench/stats.py stays runnable and counts what the snapshot computes: its quick mode in this process (a few models,
200 resamples, about a second), the JSON's fields and counts; the synthetic units at the paper's scale have the
paper's shape. No timing is asserted."""

from __future__ import annotations

import json
import math

import pytest

from bench import stats as bench
from dialogbench.mtbench101.taxonomy import TASK_CODES

UNITS_METRICS = {"botchat_unieval.pass_rate", "botchat_gteval.win_tie_rate", "mtbench101_leaderboard.avg",
                 "mtbench101_tasks.score", "gameeval_askguess.st", "gameeval_askguess.mean_rounds",
                 "gameeval_spyfall.spy_win_rate", "gameeval_spyfall.spy_living_rounds",
                 "gameeval_tofukingdom.win_rate"}


def _quick(tmp_path, *extra: str) -> dict:
    out = tmp_path / "stats.json"
    assert bench.main(["--quick", "--out", str(out), *extra]) == 0  # quick is not paper scale: never exit 1
    return json.loads(out.read_text())


def test_quick_mode_writes_the_counts_and_seconds(tmp_path, capsys):
    result = _quick(tmp_path)
    printed = capsys.readouterr().out
    sizes = result["sizes"]
    assert sizes["models"] == 3 and sizes["rounds"] == 200 and result["paper_scale"] is False
    m, pairs_of = sizes["models"], math.comb(sizes["models"], 2)
    ns = sizes["n_max"] - sizes["n_min"] + 1
    # (metric, model, slice) series: pass_rate per N, win_tie_rate, avg, a score per task, 2 settings x 2 Ask-Guess
    # metrics, every ordered (spy, villager) pair x 2 SpyFall metrics, 3 TofuKingdom camps
    assert result["series"] == m * ns + m + m + 13 * m + 2 * 2 * m + 2 * m * (m - 1) + 3 * m
    # pairs of models within each slice; a SpyFall slice (a villager) has the m - 1 other models as spies
    assert result["pairs"] == (ns + 1 + 1 + 13 + 2 * 2 + 3) * pairs_of + 2 * m * math.comb(m - 1, 2)
    assert 0 < result["with_interval"] <= result["series"] and 0 < result["tested_pairs"] <= result["pairs"]
    # (c) night over night: every series had a previous night, one paired test each, its units kept row by row
    assert result["changes"] == result["series"] and 0 < result["tested_changes"] <= result["changes"]
    assert result["unit_rows"] == sum(row["clusters"] for row in result["intervals_per_metric"]) > 0
    for field in ("read_units_s", "intervals_s", "compare_s", "changes_units_s", "changes_tests_s", "total_s",
                  "intervals_cpu_s", "compare_cpu_s", "changes_cpu_s", "total_cpu_s", "build_s"):
        assert isinstance(result[field], float) and result[field] >= 0, field
    assert result["intervals_and_pairs_s"] == pytest.approx(
        result["read_units_s"] + result["intervals_s"] + result["compare_s"])
    assert result["total_s"] == pytest.approx(
        result["intervals_and_pairs_s"] + result["changes_units_s"] + result["changes_tests_s"])
    assert {row["metric"] for row in result["intervals_per_metric"]} == UNITS_METRICS
    assert {row["metric"] for row in result["pairs_per_metric"]} == UNITS_METRICS
    assert sum(row["series"] for row in result["intervals_per_metric"]) == result["series"]
    assert sum(row["pairs"] for row in result["pairs_per_metric"]) == result["pairs"]
    assert set(result["rows"]) == {"botchat_units", "mtbench101_units", "gameeval_units"}
    assert all(count > 0 for count in result["rows"].values())
    assert {"botchat", "mtbench101", "gameeval"} <= set(result["families"])
    assert result["machine"]["nproc"] >= 1 and "commit" in result["code"]
    # no orchestration figure given: none computed, and the JSON says what is missing
    assert result["orchestration"]["seconds"] is None and "paper-scale" in result["orchestration"]["missing"]
    assert result["checks"]["share_of_orchestration"] is None and result["checks"]["target_s"] == 60.0
    assert f"({result['series']} series)" in printed and f"({result['pairs']} pairs)" in printed
    assert "total (a) + (b) + (c)" in printed


def test_an_orchestration_figure_gives_the_share(tmp_path):
    given = _quick(tmp_path, "--orchestration-s", "500")
    assert given["orchestration"]["seconds"] == 500.0
    assert given["checks"]["share_of_orchestration"] == pytest.approx(given["total_s"] / 500.0)
    assert given["checks"]["under_target_share"] is (given["total_s"] / 500.0 <= 0.10)
    artifacts = tmp_path / "artifacts.json"  # what bench/artifacts.py writes
    artifacts.write_text(json.dumps({"config": "paper.yaml", "first_run": {"wall_s": 250.0}}))
    read = _quick(tmp_path, "--orchestration-json", str(artifacts))
    assert read["orchestration"]["seconds"] == 250.0 and "first_run.wall_s" in read["orchestration"]["source"]
    (tmp_path / "empty.json").write_text("{}")
    with pytest.raises(SystemExit, match="no run wall time"):
        bench.main(["--quick", "--out", str(tmp_path / "x.json"), "--orchestration-json", str(tmp_path / "empty.json")])


@pytest.mark.parametrize("flags", [["--rounds", "50"], ["--models", "1"], ["--seeds", "0"], ["--n-max", "2"]])
def test_sizes_the_bootstrap_cannot_take_are_refused(tmp_path, flags):
    with pytest.raises(SystemExit, match="error"):
        bench.main(["--quick", "--out", str(tmp_path / "x.json"), *flags])


def test_the_paper_scale_units_have_the_papers_shape():
    sizes = bench.task_sizes(1388)
    assert set(sizes) == set(TASK_CODES) and len(sizes) == 13 and sum(sizes.values()) == 1388
    assert len(bench.vendored_words(None)) == 100 and len(bench.vendored_pairs(None)) == 11
    assert bench.PAPER["models"] == 14 and bench.PAPER["seeds"] == 547 and bench.PAPER["rounds"] == 1000
    assert (bench.PAPER["n_min"], bench.PAPER["n_max"]) == (3, 16)


def test_the_synthetic_units_read_as_the_views_do():
    sizes = dict(bench.QUICK, models=4, seeds=30, n_max=8)
    con, rows = bench.units_connection(sizes)
    try:
        types = dict(con.execute("select column_name, data_type from information_schema.columns "
                                 "where table_name = 'botchat_units'").fetchall())
        assert types == {"leaderboard": "VARCHAR", "metric": "VARCHAR", "model": "VARCHAR",
                         "key_values": "VARCHAR[]", "stratum": "VARCHAR", "cluster": "VARCHAR", "value": "DOUBLE",
                         "weight": "DOUBLE"}
        # pass@N never rises with N (a dialogue that passes at N passed at every smaller N), model 0 is the best
        rates = con.execute("select model, key_values[2]::int as n, avg(value) from botchat_units "
                            "where metric = 'pass_rate' group by all order by model, n").fetchall()
        for model in bench.model_names(4):
            mine = [rate for m, _, rate in rates if m == model]
            assert len(mine) == 8 - 3 + 1 and mine == sorted(mine, reverse=True)
        win_tie = con.execute("select distinct weight from botchat_units where metric = 'win_tie_rate'").fetchall()
        assert win_tie == [(2.0,)]
        strata = con.execute("select count(distinct stratum), count(distinct cluster) from mtbench101_units "
                             "where metric = 'avg' and model = 'model-00'").fetchone()
        assert strata == (13, sizes["dialogues"])
        camps = con.execute("select count(distinct cluster), count(*) from gameeval_units "
                            "where metric = 'win_rate'").fetchone()
        assert camps == (sizes["tofu_games"], 3 * sizes["tofu_games"])  # one row per camp of each game
        assert rows == {name: con.execute(f"select count(*) from {name}").fetchone()[0] for name in rows}
    finally:
        con.close()


PAPER_SCRIPTED = bench.REPO_ROOT / "bench" / "paper_scripted.yaml"


def test_the_paper_scripted_config_is_the_papers_scale():
    """bench/paper_scripted.yaml (the run bench/artifacts.py times beside these statistics) loads with the project's
    loader as the paper's scale: 14 scripted chatbots and a scripted judge, every ChatSEED to N 16 with UniEval, Arena
    and GTEval, all of MT-Bench-101, GameEval's trial counts; the models' scripts differ (equal scripts would give
    every model the same units, and the bootstrap skips constant differences)."""
    from dialogbench.botchat.seeds import read_seeds
    from dialogbench.run.registry import load_config

    config = load_config(PAPER_SCRIPTED, root=bench.REPO_ROOT)
    assert len(config.models) == 14 and {m.backend for m in [*config.models, *config.judges]} == {"scripted"}
    assert len({tuple(m.script) for m in config.models}) == 14
    botchat = config.botchat
    assert botchat.limit is None and botchat.n_max == 16 and max(botchat.n) == 16
    assert read_seeds(botchat.dataset).num_rows == 547  # no limit: every ChatSEED
    assert botchat.arena.enabled and botchat.arena.limit is None and botchat.arena.pairs is None
    assert botchat.gteval.enabled and botchat.gteval.limit is None
    assert botchat.judge == config.judges[0].name
    mtbench = config.mtbench101
    assert mtbench.enabled and mtbench.limit is None and mtbench.tasks is None  # all 1,388 dialogues
    games = config.gameeval
    assert games.enabled and games.askguess.limit is None and games.spyfall.limit is None
    assert (games.askguess.trials, games.spyfall.trials, games.tofukingdom.trials) == (100, 30, 20)
    assert config.dispatch is None  # the run computes everything itself


def test_the_scripted_judge_reads_in_every_protocol():
    """Each reply of the scripted judge is a UniEval verdict, an Arena / GTEval verdict and an MT-Bench-101 rating at
    once, with more than one answer of each (so the units vary); each chatbot reply is a GameEval move."""
    from dialogbench.botchat.arena import parse_arena_verdict
    from dialogbench.botchat.unieval import parse_verdict
    from dialogbench.gameeval.replies import parse_reply
    from dialogbench.mtbench101.rating import parse_rating
    from dialogbench.run.registry import load_config

    config = load_config(PAPER_SCRIPTED, root=bench.REPO_ROOT)
    replies = config.judges[0].script
    unieval = [parse_verdict(r, n_utterances=16) for r in replies]
    arena = [parse_arena_verdict(r) for r in replies]
    ratings = [parse_rating(r) for r in replies]
    assert all(v.parsed for v in unieval) and len({(v.choice, v.index) for v in unieval}) > 1
    assert all(v.parsed for v in arena) and len({v.verdict for v in arena}) > 1
    assert all(r.parsed for r in ratings) and len({r.score for r in ratings}) > 1
    for model in config.models:
        moves = [parse_reply(r, required=("thought", "speak", "name", "question")) for r in model.script]
        assert len({m["name"] for m in moves}) > 1
        assert any("gameover" in r for r in model.script) and not all("gameover" in r for r in model.script)


def test_artifacts_overrides_scale_the_paper_config_down(tmp_path):
    """bench/artifacts.py --override: dotted paths, YAML values; the scale bench/README.md ran is a valid config."""
    import yaml

    from bench import artifacts
    from dialogbench.run.registry import load_config

    data = yaml.safe_load(PAPER_SCRIPTED.read_text())
    for assignment in ("botchat.limit=182", "mtbench101.limit=35", "gameeval.askguess.trials=2",
                       "gameeval.spyfall.trials=1", "gameeval.tofukingdom.trials=1", "canary.size=4"):
        data = artifacts.override(data, assignment)
    path = tmp_path / "scaled.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    config = load_config(path, root=bench.REPO_ROOT)
    assert len(config.models) == 14 and config.botchat.limit == 182 and config.mtbench101.limit == 35
    assert (config.gameeval.askguess.trials, config.gameeval.spyfall.trials, config.gameeval.tofukingdom.trials) == (
        2, 1, 1)
    assert config.botchat.n_max == 16 and data["canary"] == {"size": 4}
    assert artifacts.override({"a": {"b": 1}}, "a.c=[x, y]") == {"a": {"b": 1, "c": ["x", "y"]}}
    for bad in ("botchat.limit", "=3"):
        with pytest.raises(SystemExit, match="PATH=VALUE"):
            artifacts.override({}, bad)
    with pytest.raises(SystemExit, match="not a mapping"):
        artifacts.override({"botchat": {"limit": 3}}, "botchat.limit.x=1")


def test_artifacts_timeline_groups_task_runs_into_steps():
    from bench import artifacts

    assert artifacts._step("plan botchat_arena") == "botchat_arena"
    assert artifacts._step("botchat_arena 7/146") == "botchat_arena"
    assert artifacts._step("record botchat_arena") == "botchat_arena"
    assert artifacts._step("generate:scripted-03") == "generate:*"
    assert artifacts._step("plan mtbench101_answer:scripted-10") == "mtbench101_answer:*"
    assert artifacts._step("snapshot-metrics-1a2") == "snapshot-metrics"
    assert artifacts._step("load-config-f4d") == "load-config"
    run = {"timeline": {"flow_s": 10.0, "steps": [{"step": "family-0", "start_s": 0, "span_s": 9.0, "tasks": 1},
                                                  {"step": "botchat_arena", "start_s": 1, "span_s": 5.0, "tasks": 3},
                                                  {"step": "snapshot-metrics", "start_s": 7, "span_s": 2.5,
                                                   "tasks": 1}]}}
    assert artifacts.longest_steps(run) == "botchat_arena 5.0s, snapshot-metrics 2.5s"
    assert artifacts.longest_steps({"timeline": None}) == ""


def test_a_run_json_gives_its_own_snapshot_share_too(tmp_path, capsys):
    artifacts = tmp_path / "artifacts.json"  # bench/artifacts.py's: the run's wall and its snapshot's seconds
    artifacts.write_text(json.dumps({"config": "paper.yaml", "first_run": {"wall_s": 800.0, "history_s": 40.0}}))
    result = _quick(tmp_path, "--orchestration-json", str(artifacts))
    orch = result["orchestration"]
    assert orch["seconds"] == 800.0 and orch["snapshot_s"] == 40.0 and orch["snapshot_share"] == pytest.approx(0.05)
    assert result["checks"]["share_of_orchestration"] == pytest.approx(result["total_s"] / 800.0)
    assert "that run's own snapshot" in capsys.readouterr().out
    (tmp_path / "wall.json").write_text(json.dumps({"wall_s": 100.0}))  # no snapshot figure: none given
    plain = _quick(tmp_path, "--orchestration-json", str(tmp_path / "wall.json"))["orchestration"]
    assert plain["seconds"] == 100.0 and plain["snapshot_s"] is None and plain["snapshot_share"] is None


@pytest.fixture(scope="module")
def scripted_night(tmp_path_factory):
    """One scripted night of BotChat (8 seeds, GTEval), MT-Bench-101 (two tasks, 6 dialogues each) and Ask-Guess,
    without Prefect (tests/stage_runner.night): its lake and board."""
    import yaml

    from dialogbench.run.registry import load_config
    from tests.conftest import VERDICT_NO, VERDICT_YES_3, VERDICT_YES_5, config_dict
    from tests.stage_runner import night

    tmp = tmp_path_factory.mktemp("night")
    script = [VERDICT_YES_5 + "\nRating: [[7]]", VERDICT_NO + "\nRating: [[3]]", VERDICT_YES_3 + "\nRating: [[5]]",
              VERDICT_NO + "\nRating: [[9]]"]
    data = config_dict(tmp / "lake", n=[4], limit=8, judge_script=script, gteval={"enabled": True})
    data["mtbench101"] = {"tasks": ["CM", "SI"], "limit": 6}
    data["gameeval"] = {"enabled": True, "askguess": {"limit": 6, "max_rounds": 1}, "spyfall": {"enabled": False},
                        "tofukingdom": {"enabled": False}}
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    config = load_config(path)
    assert night(config, "r1") > 0
    return tmp / "lake", config.board


def test_lake_mode_times_the_statistics_on_a_runs_own_units(scripted_night, tmp_path, capsys):
    """--lake: the same three parts on the lake's units views; its comparisons are the ones the run recorded (the
    pairwise view), and every series has a previous night (the run's own snapshot), one paired test each."""
    from dialogbench.lake.catalog import connect
    from dialogbench.run.registry import open_lake

    lake, board = scripted_night
    out = tmp_path / "lake.json"
    assert bench.main(["--lake", str(lake), "--board", board, "--rounds", "200", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["sizes"] == {"rounds": 200, "lake": str(lake), "board": board} and result["paper_scale"] is False
    with connect(open_lake(lake), board=board) as con:
        recorded = con.execute("select count(*) from pairwise").fetchone()[0]
        units = {view: con.execute(f"select count(*) from {view}").fetchone()[0] for view in bench.UNITS_VIEWS}
    assert result["rows"] == units and units["botchat_units"] > 0 and units["mtbench101_units"] > 0
    assert result["pairs"] == recorded > 0
    assert result["series"] > 0 and result["changes"] == result["series"]
    assert 0 < result["unit_rows"] <= sum(units.values())  # a cluster's rows (GTEval's two orders) pool into one
    assert result["total_s"] == pytest.approx(result["intervals_and_pairs_s"] + result["changes_units_s"]
                                              + result["changes_tests_s"])
    assert "on a lake's own units" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="no such directory"):
        bench.main(["--lake", str(tmp_path / "nothing"), "--out", str(tmp_path / "x.json")])


def test_artifacts_timeline_reads_the_task_runs_of_its_flow_run(tmp_path):
    """bench/artifacts.py's timeline: the steps of one flow run (by name) from a Prefect database, spans from the first
    start to the last end of each step's task runs, in order; the task runs of another run are not counted."""
    import sqlite3

    from bench import artifacts

    with sqlite3.connect(tmp_path / "prefect.db") as con:
        con.execute("create table flow_run (name text, parent_task_run_id text, start_time text, end_time text)")
        con.execute("create table task_run (name text, start_time text, end_time text)")
        con.executemany("insert into flow_run values (?, ?, ?, ?)", [
            ("run-1", None, "2026-01-01 00:00:00.000000", "2026-01-01 00:01:40.000000"),
            ("botchat", "t1", "2026-01-01 00:00:01.000000", "2026-01-01 00:00:50.000000"),
            ("run-2", None, "2026-01-01 01:00:00.000000", "2026-01-01 01:00:10.000000")])
        con.executemany("insert into task_run values (?, ?, ?)", [
            ("plan botchat_arena", "2026-01-01 00:00:02.000000", "2026-01-01 00:00:03.000000"),
            ("botchat_arena 2/2", "2026-01-01 00:00:03.500000", "2026-01-01 00:00:30.000000"),
            ("botchat_arena 1/2", "2026-01-01 00:00:03.000000", "2026-01-01 00:00:20.000000"),
            ("record botchat_arena", "2026-01-01 00:00:31.000000", "2026-01-01 00:00:32.000000"),
            ("snapshot-metrics-0a1", "2026-01-01 00:01:00.000000", "2026-01-01 00:01:30.500000"),
            ("snapshot-metrics-9f9", "2026-01-01 01:00:01.000000", "2026-01-01 01:00:09.000000")])
    found = artifacts.timeline(tmp_path, "run-1")
    assert found == {"flow_s": 100.0, "steps": [
        {"step": "botchat_arena", "start_s": 2.0, "span_s": 30.0, "tasks": 4},
        {"step": "snapshot-metrics", "start_s": 60.0, "span_s": 30.5, "tasks": 1}]}
    assert artifacts.timeline(tmp_path, "run-3") is None            # no such flow run
    assert artifacts.timeline(tmp_path / "elsewhere", "run-1") is None  # no database
