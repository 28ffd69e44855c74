"""Intervals and paired comparisons on a real (scripted) night of every family: each units view gives its
leaderboard's numbers (so the interval is the number's), the snapshot carries the bootstrap interval, the run writes
its pairs (the `pairwise` view) and `dialogbench compare` reads the board."""

from __future__ import annotations

import json

import pytest

from dialogbench.run import registry
from dialogbench.cli import main
from dialogbench.lake.catalog import connect
from dialogbench.run.registry import open_lake
from dialogbench.stats.units import checked_interval, read_units
from tests.conftest import VERDICT_GARBAGE, VERDICT_NO, VERDICT_YES_3, VERDICT_YES_5, config_dict
from tests.stage_runner import night


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """One scripted night of BotChat (8 seeds), MT-Bench-101 (two tasks, 6 dialogues each) and GameEval Ask-Guess."""
    from dialogbench.run.registry import load_config
    import yaml

    tmp = tmp_path_factory.mktemp("board")
    script = [VERDICT_YES_5 + "\nRating: [[7]]", VERDICT_NO + "\nRating: [[3]]", VERDICT_YES_3 + "\nRating: [[5]]",
              VERDICT_NO + "\nRating: [[9]]", VERDICT_GARBAGE]  # UniEval's and MT-Bench-101's formats in one reply
    data = config_dict(tmp / "lake", n=[4], limit=8, judge_script=script, gteval={"enabled": True},
                       arena={"enabled": True})
    data["mtbench101"] = {"tasks": ["CM", "SI"], "limit": 6}
    data["gameeval"] = {"enabled": True, "askguess": {"limit": 6, "max_rounds": 1}, "spyfall": {"enabled": False},
                        "tofukingdom": {"enabled": False}}
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    config = load_config(path)
    assert night(config, "r1") > 0
    return open_lake(tmp / "lake")


def test_every_units_view_gives_its_leaderboards_numbers(board):
    checked = 0
    with connect(board) as con:
        for family in registry.families():
            for metric in family.metrics:
                if metric.units is None:
                    continue
                units = read_units(con, metric)
                for model, key_values, value, *_ in con.execute(metric.select_sql()).fetchall():
                    if value is None:
                        continue
                    found = checked_interval(units.get((model, tuple(key_values))), value)
                    assert not (found.reason or "").startswith(("its units give", "no units")), (metric, model, found)
                    checked += 1
    assert checked >= 10


def test_the_snapshot_carries_the_cluster_bootstrap_and_the_run_its_pairs(board):
    with connect(board) as con:
        gteval = con.execute("select value, ci_low, ci_high, n from metric_history "
                             "where leaderboard = 'botchat_gteval'").fetchall()
        wilson = con.execute("select win_tie_ci_low, win_tie_ci_high from botchat_gteval").fetchall()
        tasks = con.execute("select value, ci_low, ci_high from metric_history where leaderboard = 'mtbench101_tasks'"
                            " and ci_low is not null").fetchall()
        pairs = con.execute("select metric, model_a, model_b, verdict, shared, p, p_holm from pairwise").fetchall()
    assert gteval and all(low <= value <= high for value, low, high, _ in gteval if low is not None)
    # both orders of a seed are one unit: the interval is not the Wilson band of 2 x 8 independent comparisons
    assert {(low, high) for _, low, high, _ in gteval} != set(wilson)
    assert all(low <= value <= high for value, low, high in tasks)
    assert {p[0] for p in pairs} >= {"pass_rate", "win_tie_rate", "score", "avg"}
    assert all(p[1] < p[2] and p[4] > 0 for p in pairs)
    assert all(p[6] is None or p[6] >= p[5] for p in pairs)  # Holm never lowers a p


def test_headline_ranks_each_measured_number_within_its_slice(board):
    """The snapshot's rank and rank range (Chatbot Arena's rule over the recorded intervals) reach `headline`: every
    measured number of a slice of two models ranks 1 or 2 and its range holds its rank; none for a refused one."""
    with connect(board) as con:
        rows = con.execute("select leaderboard, metric, slice, model, value, measured, rank, rank_low, rank_high, "
                           "count(*) over (partition by leaderboard, metric, slice) from headline").fetchall()
    ranked = [r for r in rows if r[5] and r[4] is not None]
    assert ranked and all(1 <= r[7] <= r[6] <= r[8] <= r[9] for r in ranked)
    assert all(r[6] is None for r in rows if not r[5])
    assert any(r[6] == 2 for r in ranked)  # two models somewhere apart


def test_compare_names_two_models_and_refuses_an_unknown_one(board, capsys):
    assert main(["compare", "bot-a", "bot-b", "--lake", str(board.root), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["family"] for r in rows} >= {"botchat", "mtbench101"}
    assert all({r["model_a"], r["model_b"]} == {"bot-a", "bot-b"} and r["verdict"] for r in rows)
    assert main(["compare", "bot-a", "bot-z", "--lake", str(board.root)]) == 2
    assert "has no numbers for 'bot-z'" in capsys.readouterr().err
    assert main(["compare", "bot-a", "--lake", str(board.root)]) == 2
    assert main(["compare", "--all", "--lake", str(board.root), "--family", "mtbench101"]) == 0
    out = capsys.readouterr().out
    assert "MT-Bench-101" in out and "BotChat" not in out


def test_a_second_night_keeps_its_units_and_tests_each_series_against_the_first(board, tmp_path):
    """The same config again: every cell cached, so each series is tested on all its units and nothing moved."""
    from dialogbench.run.registry import load_config

    config = load_config(board.root.parent / "config.yaml")
    night(config, "r2")
    with connect(board) as con:
        kept = con.execute("select run_id, count(*) from metric_units group by run_id order by run_id").fetchall()
        tested = con.execute("select count(*), min(shared), max(abs(shared_delta)) from metric_changes "
                             "where run_id = 'r2'").fetchone()
        statuses = {r[0] for r in con.execute("select distinct status from changes").fetchall()}
    assert [r[0] for r in kept] == ["r1", "r2"] and kept[0][1] == kept[1][1] > 0
    assert tested[0] > 0 and tested[1] > 0 and tested[2] == 0
    assert "same" in statuses and statuses <= {"same", "not measured"}  # nothing moved, nothing within noise


def test_compare_standings_give_each_model_an_interval_and_a_rank_range(board, capsys):
    assert main(["compare", "--standings", "--lake", str(board.root), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["model"] for r in rows} == {"bot-a", "bot-b"}
    for r in rows:
        assert 1 <= r["rank_low"] <= r["rank"] <= r["rank_high"] <= 2
        assert (r["ci_low"] is None) == (r["note"] is not None)
        assert r["ci_low"] is None or r["ci_low"] <= r["value"] <= r["ci_high"]


def test_the_views_refuse_what_the_report_refuses(board):
    """A judge that fails its checks: `headline` nulls its numbers (raw_value kept), and the family's own views say
    `measured = false` with the report's reason (the issue's botchat_unieval with a pass_rate and no word of it)."""
    with connect(board) as con:
        refused = con.execute("select judge, protocol, reason from not_measured").fetchall()
        headline = con.execute("select leaderboard, model, slice, value, raw_value, ci_low, measured, note "
                               "from headline").fetchall()
        views = {view: con.execute(f"select distinct measured, not_measured from {view}").fetchall()
                 for view in ("botchat_unieval", "botchat_gteval", "mtbench101_tasks", "mtbench101_leaderboard")}
    assert refused, "the scripted judge fails a check on some protocol"
    unmeasured = [h for h in headline if not h[6]]
    assert unmeasured and all(h[3] is None and h[5] is None and h[4] is not None and h[7] for h in unmeasured)
    assert all(h[3] == h[4] for h in headline if h[6])
    protocol_of = {"botchat_unieval": "botchat_unieval", "botchat_gteval": "botchat_gteval",
                   "mtbench101_tasks": "mtbench101_judge", "mtbench101_leaderboard": "mtbench101_judge"}
    reasons = {protocol: reason for _, protocol, reason in refused}
    for view, found in views.items():
        expected = [(False, reasons[protocol_of[view]])] if protocol_of[view] in reasons else [(True, None)]
        assert found == expected, (view, found)
