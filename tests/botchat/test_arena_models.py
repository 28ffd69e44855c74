"""``botchat_arena.winner_model`` / ``loser_model``: the winning and losing side's model NAME (null for a tie or an
unparsed verdict), beside ``winner`` (the role, what ``dialogbench elo`` reads), on a lake built through the real
generation and Arena stages with a scripted judge."""

from __future__ import annotations

from dialogbench.run.registry import open_lake
from dialogbench.lake.catalog import data_tests
from tests.botchat.test_comparison_pipeline import (BOTH, C1, C2, GARBAGE, NEITHER, THREE, comparison_config,
                                                    generate, judge, view)


def test_winner_and_loser_models_name_the_sides(make_config, lake_dir):
    """The script of test_arena_views_by_hand: pairs (a, b) and (b, c) get C2, C1 on seed 1 (conversation 2 is the
    AI, so the side shown first wins; then the second), Neither, garbage on seed 2 (a tie, an unparsed verdict);
    pair (a, c) gets C1, C1, Both, Both."""
    config = comparison_config(make_config, lake_dir, models=THREE,
                               judge_script=[C2, C1, NEITHER, GARBAGE, C1, C1, BOTH, BOTH])
    generate(config)
    judge(config, "arena")
    rows = view(config, "select * from botchat_arena")
    assert len(rows) == 12
    for r in rows:
        side = {"model_a": (r["model_a"], r["model_b"]), "model_b": (r["model_b"], r["model_a"])}.get(r["winner"])
        assert (r["winner_model"], r["loser_model"]) == (side or (None, None))
    by_verdict = {}
    for r in rows:
        by_verdict.setdefault((r["verdict"], r["winner"]), set()).add((r["model_a"], r["model_b"], r["winner_model"],
                                                                       r["loser_model"]))
    # conversation_2 judged the AI: the first-shown model wins; conversation_1: the second-shown one
    assert ("bot-a", "bot-b", "bot-a", "bot-b") in by_verdict[("conversation_2", "model_a")]
    assert ("bot-b", "bot-a", "bot-a", "bot-b") in by_verdict[("conversation_1", "model_b")]
    assert {(w, lo) for _, _, w, lo in by_verdict[("neither", "tie")] | by_verdict[("both", "tie")]} == {(None, None)}
    unparsed = [r for r in rows if not r["parsed"]]
    assert len(unparsed) == 2 and all(r["winner_model"] is None and r["loser_model"] is None for r in unparsed)
    # the obvious question: wins per model, straight from the view
    wins = {r["winner_model"]: r["n"] for r in view(config, "select winner_model, count(*) as n from botchat_arena "
                                                            "where winner_model is not null group by all")}
    losses = {r["loser_model"]: r["n"] for r in view(config, "select loser_model, count(*) as n from botchat_arena "
                                                             "where loser_model is not null group by all")}
    assert wins == {"bot-a": 3, "bot-b": 2, "bot-c": 1} and losses == {"bot-a": 1, "bot-b": 2, "bot-c": 3}
    # botchat_pair_rates reads winner_model: its counts still add up (test_arena_views_by_hand has the figures)
    rates = {(r["model_a"], r["model_b"]): (r["wins_a"], r["wins_b"], r["ties"])
             for r in view(config, "select * from botchat_pair_rates")}
    assert rates == {("bot-a", "bot-b"): (2, 0, 1), ("bot-a", "bot-c"): (1, 1, 2), ("bot-b", "bot-c"): (2, 0, 1)}
    assert data_tests(open_lake(config.lake)) == {}
