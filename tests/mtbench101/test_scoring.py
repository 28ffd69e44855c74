"""Minimum over judged turns, task means with a left-out count, and Table 3's aggregates, by hand."""

from __future__ import annotations

import pytest

from dialogbench.mtbench101.scoring import (SKIP_FIRST_TURN, TaskScore, dialogue_score, is_judged, judged_turns,
                                            leaderboard, task_scores)
from dialogbench.mtbench101.taxonomy import ABILITIES, ABILITY_TIER, TASK_CODES, TIERS, columns, tasks_of


def test_taxonomy_is_the_papers():
    assert TIERS == ("Perceptivity", "Adaptability", "Interactivity")
    assert ABILITIES == ("Memory", "Understanding", "Interference", "Rephrasing", "Reflection", "Reasoning",
                         "Questioning")
    assert [tasks_of(ability=a) for a in ABILITIES] == [
        ("CM",), ("SI", "AR"), ("TS", "CC"), ("CR", "FR"), ("SC", "SA"), ("MR", "GR"), ("IC", "PI")]
    assert [ABILITY_TIER[a] for a in ABILITIES] == ["Perceptivity"] * 3 + ["Adaptability"] * 3 + ["Interactivity"]
    assert [c for _, _, c in columns()] == "CM SI AR TS CC CR FR SC SA MR GR IC PI".split()


def test_which_turns_are_judged():
    assert SKIP_FIRST_TURN == {"FR", "CR", "AR", "SA", "SC", "CM"}
    assert judged_turns(task="CM", n_turns=3) == (1, 2)
    assert judged_turns(task="TS", n_turns=3) == (0, 1, 2)
    assert not is_judged(task="SA", turn=0) and is_judged(task="SA", turn=1) and is_judged(task="IC", turn=0)
    with pytest.raises(KeyError):
        is_judged(task="XX", turn=0)


def test_dialogue_score_is_the_minimum_over_judged_turns():
    ratings = {0: 2, 1: 8, 2: 6}
    assert dialogue_score(task="CM", n_turns=3, ratings=ratings) == 6  # turn 0 is context only: min(8, 6)
    assert dialogue_score(task="TS", n_turns=3, ratings=ratings) == 2  # every turn judged: min(2, 8, 6)
    assert dialogue_score(task="CM", n_turns=3, ratings={1: 8, 2: 6}) == 6


def test_an_unparsed_or_missing_judged_turn_leaves_the_dialogue_unscored():
    assert dialogue_score(task="CM", n_turns=3, ratings={0: None, 1: 8, 2: 6}) == 6  # unjudged None is fine
    assert dialogue_score(task="CM", n_turns=3, ratings={0: 9, 1: 8, 2: None}) is None
    assert dialogue_score(task="TS", n_turns=3, ratings={1: 8, 2: 6}) is None
    assert dialogue_score(task="CM", n_turns=1, ratings={0: 9}) is None  # nothing judged
    with pytest.raises(ValueError):
        dialogue_score(task="TS", n_turns=1, ratings={0: 11})


def test_task_score_is_the_mean_of_scored_dialogues_with_a_left_out_count():
    scores = task_scores(dialogue_scores=[("CM", 6), ("CM", 8), ("CM", None), ("PI", 3), ("SI", None)])
    assert list(scores) == ["CM", "SI", "PI"]  # Table 3 order
    assert scores["CM"] == TaskScore("CM", 7.0, 2, 1)
    assert scores["PI"] == TaskScore("PI", 3.0, 1, 0)
    assert scores["SI"] == TaskScore("SI", None, 0, 1)


def test_abilities_tiers_and_overall_reproduce_table_3_gpt4():
    gpt4 = dict(zip(TASK_CODES, [8.88, 8.99, 9.58, 9.83, 9.98, 9.54, 9.57, 9.36, 9.52, 7.15, 7.17, 9.00, 6.64]))
    row = leaderboard(tasks=gpt4)
    assert row.overall == pytest.approx(115.21 / 13)  # 8.862 → Table 3 prints 8.86
    assert round(row.overall, 2) == 8.86
    assert row.abilities["Memory"] == pytest.approx(8.88)
    assert row.abilities["Understanding"] == pytest.approx((8.99 + 9.58) / 2)  # 9.285
    assert row.abilities["Reasoning"] == pytest.approx((7.15 + 7.17) / 2)  # 7.16
    assert row.tiers["Perceptivity"] == pytest.approx(47.26 / 5)  # CM SI AR TS CC: 9.452
    assert row.tiers["Adaptability"] == pytest.approx(52.31 / 6)  # CR FR SC SA MR GR: 8.718
    assert row.tiers["Interactivity"] == pytest.approx(7.82)  # (9.00 + 6.64) / 2


def test_overall_is_the_flat_task_mean_not_the_ability_mean():
    # Llama2-7B-Chat, Table 3: Avg. 6.53 = mean of the 13 tasks; the mean of the 7 abilities would be 6.61.
    llama = dict(zip(TASK_CODES, [7.64, 6.21, 7.92, 8.23, 8.50, 8.32, 8.56, 8.45, 4.97, 1.88, 3.83, 5.23, 5.11]))
    row = leaderboard(tasks=llama)
    assert round(row.overall, 2) == 6.53
    assert round(sum(row.abilities.values()) / 7, 2) == 6.61


def test_missing_tasks_blank_only_the_aggregates_above_them():
    tasks = {c: TaskScore(c, 5.0, 1, 0) for c in TASK_CODES}
    tasks["PI"] = TaskScore("PI", None, 0, 4)
    row = leaderboard(tasks=tasks)
    assert row.tasks["PI"] is None and row.abilities["Questioning"] is None and row.tiers["Interactivity"] is None
    assert row.overall is None
    assert row.abilities["Memory"] == 5.0 and row.tiers["Perceptivity"] == 5.0
