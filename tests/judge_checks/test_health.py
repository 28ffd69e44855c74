"""The judge checks on real stages with scripted judges: a judge whose verdicts cannot be read, or that gives the
same answer to everything, is found per (judge, protocol); its numbers are not measured wherever they show (the
report, the CLI leaderboard, the history) and the run's check fails; a judge that does its job passes."""

from __future__ import annotations

from dialogbench.run import registry
from dialogbench.botchat.leaderboard import format_leaderboard
from dialogbench.judge_checks.check import failing
from dialogbench.run.registry import open_lake
from dialogbench.lake.catalog import connect
from dialogbench.report.build import render
from tests.conftest import VERDICT_GARBAGE, VERDICT_NO, VERDICT_YES_3, config_dict
from tests.stage_runner import night

YES_4 = "Choice: Yes\nIndex: 4\nReason: the fourth utterance repeats itself."


def rows(config, sql: str) -> list[dict]:
    with connect(open_lake(config.lake), board=config.board) as con:
        relation = con.execute(sql)
        columns = [d[0] for d in relation.description]
        return [dict(zip(columns, r)) for r in relation.fetchall()]


def make(make_config, lake_dir, script, *, limit=6, checks=None):
    """A config whose judge answers ``script``; no known-answer probes (test_probes.py has them)."""
    data = config_dict(lake_dir, judge_script=script, n=[4], limit=limit)
    data["judge_checks"] = {"probes": 0, **(checks or {})}
    return make_config(data)


def test_an_unreadable_judge_is_not_measured_anywhere_and_fails_the_run(make_config, lake_dir):
    config = make(make_config, lake_dir, [VERDICT_GARBAGE, VERDICT_GARBAGE, VERDICT_NO])  # 2 of 3 unreadable
    night(config, "r1")
    (health,) = rows(config, "select * from judge_health")
    assert (health["protocol"], health["verdicts"], health["unparsed"]) == ("botchat_unieval", 12, 8)

    (line,) = failing(config, open_lake(config.lake), "r1")
    assert "judge on botchat_unieval: 8 of 12 verdicts (67%) could not be read" in line
    # the authors' rule would count every unreadable verdict as a pass: no pass rate is shown as a score
    board = registry.leaderboards(config)["botchat"]
    assert {r["pass@4"] for r in board} == {None} and all("could not be read" in r["not_measured"] for r in board)
    assert "not measured" in format_leaderboard(board, [4])
    md = render(open_lake(config.lake), board=config.board, families=registry.families())["md"]
    leaderboard = md.split("## Leaderboard")[1].split("\n## ")[0]
    assert "not measured — 67% unreadable on botchat\\_unieval" in leaderboard and "| not measured ⚠ |" in leaderboard
    assert "could not be read" in leaderboard
    assert "100.0%" not in leaderboard  # nor the parsed-only rates of that judge
    assert "## Can the judge tell?" in md and "no: its verdicts cannot be read" in md
    snap = rows(config, "select measured, note from metric_history")
    assert snap and {r["measured"] for r in snap} == {False} and all("could not be read" in r["note"] for r in snap)


def test_an_unreadable_judge_is_never_a_movement(make_config, lake_dir):
    readable = make(make_config, lake_dir, [VERDICT_NO, YES_4])
    night(readable, "r1")
    broken = make(make_config, lake_dir, [VERDICT_GARBAGE], checks={})  # the same board, the judge answers garbage
    broken = broken.model_copy(update={"judges": [broken.judges[0].model_copy(update={"max_tokens": 63})]})
    night(broken, "r2")
    changed = rows(broken, "select status, delta, note from changes")
    assert changed and {r["status"] for r in changed} == {"not measured"} and {r["delta"] for r in changed} == {None}


def test_a_judge_that_says_the_same_to_everything_does_not_discriminate(make_config, lake_dir):
    config = make(make_config, lake_dir, [VERDICT_NO], limit=12)  # 24 verdicts, every one "No"
    night(config, "r1")
    (health,) = rows(config, "select * from judge_health")
    assert (health["top_answer"], health["top_count"], health["top_share"]) == ("No", 24, 1.0)
    (line,) = failing(config, open_lake(config.lake), "r1")
    assert "does not discriminate: 24 of 24 parsed verdicts (100%) are the same answer 'No'" in line
    md = render(open_lake(config.lake), board=config.board, families=registry.families())["md"]
    assert "not measured — 100% same answer on botchat\\_unieval" in md.split("## Leaderboard")[1].split("\n## ")[0]
    quiet = make(make_config, lake_dir, [VERDICT_NO], limit=12, checks={"fail": ["unparsed"]})
    assert failing(quiet, open_lake(quiet.lake), "r1") == []  # found, shown, but not a failed run by this config


def test_a_judge_that_does_its_job_passes(make_config, lake_dir):
    config = make(make_config, lake_dir, [VERDICT_NO, YES_4, VERDICT_YES_3], limit=12)
    night(config, "r1")
    (health,) = rows(config, "select * from judge_health")
    assert health["unparsed"] == 0 and health["top_share"] < 0.95
    assert failing(config, open_lake(config.lake), "r1") == []
    assert all(r.get("not_measured") is None and r["pass@4"] is not None for r in registry.leaderboards(config)["botchat"])
    assert {r["measured"] for r in rows(config, "select measured from metric_history")} == {True}


def test_the_views_say_what_the_last_run_refused_and_the_leaderboard_what_the_checks_say_now(make_config, lake_dir):
    """The run records its findings: botchat_unieval says measured = false with the reason, `headline` nulls the number.
    A leaderboard read later under other settings (the checks off) follows its own check, not the recorded one."""
    config = make(make_config, lake_dir, [VERDICT_NO], limit=12)  # does not discriminate
    night(config, "r1")
    view = rows(config, "select distinct measured, not_measured from botchat_unieval")
    assert [(r["measured"], "does not discriminate" in r["not_measured"]) for r in view] == [(False, True)]
    headline = rows(config, "select value, raw_value, measured from headline where leaderboard = 'botchat_unieval'")
    assert headline and all(r["value"] is None and r["raw_value"] == 1.0 and not r["measured"] for r in headline)
    relaxed = make(make_config, lake_dir, [VERDICT_NO], limit=12, checks={"enabled": False})
    board = registry.leaderboards(relaxed)["botchat"]
    assert board and all(r.get("not_measured") is None and r["pass@4"] == 1.0 for r in board)


def test_too_few_verdicts_are_not_judged_for_discrimination(make_config, lake_dir):
    config = make(make_config, lake_dir, [VERDICT_NO], limit=3)  # 6 verdicts < min_verdicts 20
    night(config, "r1")
    assert failing(config, open_lake(config.lake), "r1") == []


def test_an_arena_judge_that_cannot_be_read_leaves_no_rating_but_says_so(make_config, lake_dir):
    """No parsed verdict, no game, no Elo row: the leaderboard still has its Elo column, saying not measured."""
    data = config_dict(lake_dir, judge_script=[VERDICT_NO], n=[4], limit=6, arena={"enabled": True, "n": [4]})
    data["judge_checks"] = {"probes": 0}
    config = make_config(data)
    night(config, "r1")
    assert rows(config, "select * from botchat_elo") == []
    md = render(open_lake(config.lake), board=config.board, families=registry.families())["md"]
    leaderboard = md.split("## Leaderboard")[1].split("\n## ")[0]
    assert "Elo@4" in leaderboard and "not measured — 100% unreadable on botchat\\_arena" in leaderboard
    assert "judge on botchat\\_arena: 12 of 12 verdicts (100%) could not be read" in leaderboard
