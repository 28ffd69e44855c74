"""``judge_checks.items: hard``: each kind of known-answer probe gated apart on the lower end of its Wilson 95%
interval (UniEval's specificity and sensitivity, each order of a pairwise protocol, MT-Bench-101's golden-vs-wrong
pairs), and the pairwise flip rate on its upper end (position bias); ``basic`` keeps the pooled point accuracy."""

from __future__ import annotations

import pytest

from dialogbench.judge_checks.config import JudgeChecksConfig
from dialogbench.judge_checks.health import findings, not_measured


def wilson(k: int, n: int) -> tuple[float, float]:
    z = 1.959963984540054
    centre, spread = k + z * z / 2, z * (k * (n - k) / n + z * z / 4) ** 0.5
    return (centre - spread) / (n + z * z), (centre + spread) / (n + z * z)


def kind(protocol: str, kind: str, correct: int, probes: int, judge: str = "j", **extra) -> dict:
    low, high = wilson(correct, probes)
    return {"judge": judge, "protocol": protocol, "kind": kind, "probes": probes, "correct": correct,
            "accuracy": correct / probes, "ci_low": low, "ci_high": high, **extra}


def order(protocol: str, variant: str, correct: int, probes: int, flips: int, judge: str = "j") -> dict:
    low, high = wilson(flips, probes)
    return kind(protocol, "right_vs_wrong", correct, probes, judge, variant=variant, items=probes, flips=flips,
                flip_rate=flips / probes, flip_ci_low=low, flip_ci_high=high)


HARD = JudgeChecksConfig(items="hard")


def test_a_judge_that_pools_well_but_fails_one_kind_is_caught():
    """54 human dialogues all right, 54 AI-marked ones 60% right: pooled 80% passes the basic gate; hard fails
    sensitivity, and says which kind, with its interval."""
    rows = [kind("botchat_unieval", "human", 54, 54), kind("botchat_unieval", "ai_marked", 33, 54)]
    assert findings([], JudgeChecksConfig(items="basic"), rows) == []
    (found,) = findings([], HARD, rows)
    assert found.check == "probes" and "on ai_marked: right on 33 of 54" in found.why and "95% CI" in found.why
    assert found.share == rows[1]["ci_low"]


def test_the_lower_bound_not_the_point_decides():
    """50 of 54 (93%) clears 80% on its lower end (82%); 9 of 10 (90%) does not (60%): too few items to tell."""
    assert findings([], HARD, [kind("mtbench101_judge", "golden_vs_wrong", 50, 54)]) == []
    (found,) = findings([], HARD, [kind("mtbench101_judge", "golden_vs_wrong", 9, 10)])
    assert found.share < 0.8 and "right on 9 of 10 known-answer probes (90%" in found.why


def test_each_order_and_the_flip_rate_are_gated_apart():
    """A position-first judge: every item right when the right side comes first, wrong otherwise. Its pooled
    accuracy is 50%; hard names the failing order and the position bias."""
    rows = [kind("botchat_arena", "right_vs_wrong", 54, 108)]
    orders = [order("botchat_arena", "right_first", 54, 54, 54), order("botchat_arena", "wrong_first", 0, 54, 54)]
    found = findings([], HARD, rows, orders)
    assert [f.check for f in found] == ["probes", "probes", "position"]
    assert "wrong_first order" in found[1].why and "flipped with the order" in found[2].why
    assert not_measured(found)[("j", "botchat_arena")].check == "probes"
    # right in both orders, 4 flips of 54: under the 20% bound's upper end (16%): no finding
    good = [order("botchat_arena", v, 52, 54, 4) for v in ("right_first", "wrong_first")]
    assert findings([], HARD, [kind("botchat_arena", "right_vs_wrong", 104, 108)], good) == []
    # 12 flips of 54 (22%, upper end 35%): position bias although both orders are right 89% of the time
    biased = [order("botchat_arena", v, 48, 54, 12) for v in ("right_first", "wrong_first")]
    (found,) = findings([], HARD.model_copy(update={"min_probe_accuracy": 0.7}),
                        [kind("botchat_arena", "right_vs_wrong", 96, 108)], biased)
    assert found.check == "position" and found.short == "not measured: 22% flip with the order"


def test_the_orders_view_counts_each_order_and_the_items_that_flip(make_config, lake_dir, scripted_calls):
    """A judge that always picks the conversation shown first, on real probe stages: one order all right, the other
    all wrong, every item a flip (judge_probe_orders); hard items fail it on both counts."""
    from dialogbench.judge_checks.health import order_rows, probe_rows
    from dialogbench.lake.catalog import connect
    from dialogbench.run.registry import open_lake
    from tests.judge_checks.test_probes import night, oracle, probe_config

    scripted_calls.answer("judge", lambda c: "Choice: Conversation 1\nReason: first."
                          if "Conversation 2:" in c[-1]["content"] else oracle(c))
    config = probe_config(make_config, lake_dir, probes=4)
    night(config, "r1")
    with connect(open_lake(config.lake), board=config.board) as con:
        orders, probes = order_rows(con), probe_rows(con)
    arena = [r for r in orders if r["protocol"] == "botchat_arena"]
    assert sorted((r["variant"], r["accuracy"]) for r in arena) == [("ai_first", 0.0), ("human_first", 1.0)] or \
        sorted((r["variant"], r["accuracy"]) for r in arena) == [("ai_first", 1.0), ("human_first", 0.0)]
    assert {(r["items"], r["flips"], r["flip_rate"]) for r in arena} == {(4, 4, 1.0)}
    assert {r["protocol"] for r in orders} == {"botchat_arena", "botchat_gteval"}  # pairwise protocols only
    checks = {(f.protocol, f.check) for f in findings([], HARD, probes, orders)}
    assert {("botchat_arena", "probes"), ("botchat_arena", "position"), ("botchat_gteval", "position")} <= checks


def test_hard_items_default_to_enough_of_them():
    """Hard items are the default, 54 per protocol unless probes is set (10 right of 10 cannot clear 80% on its
    lower end); basic ones are 10 unless set."""
    assert (JudgeChecksConfig().items, JudgeChecksConfig().probes, JudgeChecksConfig(items="hard", probes=20).probes,
            JudgeChecksConfig(items="basic").probes, JudgeChecksConfig(items="basic", probes=4).probes) == (
        "hard", 54, 20, 10, 4)
    (found,) = findings([], HARD, [kind("botchat_unieval", "human", 10, 10)])
    assert found.share < 0.8  # a perfect judge on 10 items: its interval's lower end is 72%


def test_too_few_items_say_the_bound_is_loose():
    """The demo's 5 items a kind: even right on all 5, the lower end (5 / (5 + z²) = 56.6%) is under 80%, and the probe
    table says so; 16 items reach it (80.6%), and 54 say nothing."""
    from dialogbench.judge_checks.report import loose_bound, perfect_low

    assert perfect_low(16) == pytest.approx(16 / (16 + 1.959963984540054 ** 2)) and perfect_low(15) < 0.8 < perfect_low(16)
    note = loose_bound([kind("botchat_unieval", "human", 5, 5), kind("botchat_unieval", "ai_marked", 0, 5)], HARD)
    assert "5 items a kind is too few for a tight bound" in note and "56.6%" in note and "80.0%" in note
    assert loose_bound([kind("botchat_unieval", "human", 54, 54)], HARD) == ""
    assert loose_bound([kind("botchat_unieval", "human", 16, 16)], HARD) == ""
