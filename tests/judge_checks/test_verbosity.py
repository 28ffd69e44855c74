"""Verbosity bias: a judge that prefers the longer side of the length-controlled known-answer pairs (BotChat's hard
Arena / GTEval items, MT-Bench-101's golden-vs-wrong pairs) is named by the ``verbosity`` judge check. Each probe cell
records which side is the longer (``judge_probes.longer``, checked here against the items' own lengths); the
``judge_verbosity`` view compares a judge's accuracy when the right side is the longer with its accuracy when it is the
shorter (Newcombe's interval of the difference); a "longer is better" judge fails the check on real probe stages, a
judge that knows the answer does not; probe files written before the column still read."""

from __future__ import annotations

import json
from collections import defaultdict

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dialogbench.run import registry
from dialogbench.botchat import probes as botchat_probes
from dialogbench.cells import Table
from dialogbench.cells.runner import run_stage
from dialogbench.judge_checks.check import failing, summary
from dialogbench.judge_checks.config import JudgeChecksConfig
from dialogbench.judge_checks.health import findings, not_measured, probe_rows, verbosity_findings, verbosity_rows
from dialogbench.judge_checks.probe_stage import longer_side
from dialogbench.judge_checks.report import verdict
from dialogbench.judge_checks.tables import PROBES, PROBES_TABLE
from dialogbench.lake.catalog import connect
from dialogbench.mtbench101 import probes as mtbench101_probes
from dialogbench.report.build import render
from tests.conftest import VERDICT_NO, ScriptedCalls, config_dict
from tests.judge_checks.test_hard_gates import kind, wilson

K = 20  # hard items per protocol: 10 with each side the longer (40 cells a pairwise protocol, 20 pairs MT-Bench-101)
PAIRWISE = ("botchat_arena", "botchat_gteval")
KINDS = {"botchat_arena": "right_vs_wrong", "botchat_gteval": "human_vs_marked"}  # GTEval: a human vs its AI twin


def newcombe(right_longer: int, n_longer: int, right_shorter: int, n_shorter: int) -> dict:
    """A judge_verbosity row, its interval computed here from the Wilson intervals (test_hard_gates.wilson)."""
    a, b = right_longer / n_longer, right_shorter / n_shorter
    (l1, h1), (l2, h2) = wilson(right_longer, n_longer), wilson(right_shorter, n_shorter)
    return {"judge": "j", "protocol": "mtbench101_judge", "kind": "golden_vs_wrong",
            "items": n_longer + n_shorter, "n_longer": n_longer, "right_longer": right_longer, "acc_longer": a,
            "n_shorter": n_shorter, "right_shorter": right_shorter, "acc_shorter": b, "gap": a - b,
            "gap_ci_low": a - b - ((a - l1) ** 2 + (h2 - b) ** 2) ** 0.5,
            "gap_ci_high": a - b + ((h1 - a) ** 2 + (b - l2) ** 2) ** 0.5, "longer_pick_rate": 0.5}


# --- the gate ------------------------------------------------------------------------------------------------------

def test_a_gap_whose_lower_end_is_over_the_threshold_fails_verbosity():
    """27 of 27 right when the right side is longer, 9 of 27 when shorter: a gap of 67 points, its interval's lower
    end far over 20: verbosity, named with its numbers; 24 of 27 against 20 of 27 (a gap of 15 points, lower end under
    0) is no finding, nor is a kind whose items are all one way (no gap to measure)."""
    biased, fine = newcombe(27, 27, 9, 27), newcombe(24, 27, 20, 27)
    settings = JudgeChecksConfig(items="hard")
    (found,) = verbosity_findings([biased, fine], settings)
    assert (found.check, found.judge, found.protocol, found.n) == ("verbosity", "j", "mtbench101_judge", 54)
    assert found.share == pytest.approx(2 / 3) and found.threshold == 0.2
    assert "prefers the longer side on golden_vs_wrong: right on 27 of 27" in found.why
    assert "against 9 of 27 where it is the shorter (33%), a gap of 67% (95% CI " in found.why
    assert "judge_checks.max_verbosity_gap 20%: its numbers are not measured" in found.why
    assert found.short == "not measured: 67% more often right when longer"
    one_way = {**biased, "n_shorter": 0, "right_shorter": 0, "acc_shorter": None, "gap": None, "gap_ci_low": None,
               "gap_ci_high": None}
    assert verbosity_findings([one_way, fine], settings) == []
    # the threshold is the config's; the check runs with the basic items too (the interval decides)
    assert verbosity_findings([biased], settings.model_copy(update={"max_verbosity_gap": 0.7})) == []
    assert [f.check for f in verbosity_findings([biased], JudgeChecksConfig())] == ["verbosity"]
    # through findings(): a keyword of its own, after the other checks; the judge's numbers are not measured
    probes = [kind("mtbench101_judge", "golden_vs_wrong", 36, 54)]
    checks = findings([], settings, probes, verbosity=[biased])
    assert [f.check for f in checks] == ["probes", "verbosity"]
    assert findings([], settings, probes) == checks[:1]  # without the keyword, as before
    assert not_measured(findings([], settings, verbosity=[biased]))[("j", "mtbench101_judge")].check == "verbosity"


# --- the longer side each probe records ----------------------------------------------------------------------------

def hard_config(make_config, lake_dir, k: int = K, items: str = "hard"):
    data = config_dict(lake_dir, judge_script=[VERDICT_NO], n=[6], limit=2, arena={"enabled": True, "n": [6]},
                       gteval={"enabled": True})
    data["mtbench101"] = {"enabled": True, "judge": "judge", "tasks": ["CM"], "limit": 1}
    data["judge_checks"] = {"probes": k, "items": items, "max_unparsed": 1.0}
    return make_config(data)


def stages_of(config, k: int = K) -> dict:
    """The probe stages of the pairwise protocols and MT-Bench-101 (UniEval's probes are not pairs)."""
    return {s.protocol: s for s in [*botchat_probes.probes(config, k), *mtbench101_probes.probes(config, k)]
            if s.protocol != "botchat_unieval"}


def chars(conversation) -> int:
    return sum(len(u) for u in conversation)


def right_and_other(probe):
    """The side that should win (or rate higher) and the other, as the prompt shows them."""
    if probe.pair_id is None:  # BotChat: both conversations in one prompt
        first, second = probe.content
        return (first, second) if probe.variant in ("right_first", "human_first") else (second, first)
    raise AssertionError("pairs: see pair_answers")


def pair_answers(stage) -> dict[str, dict[str, str]]:
    """MT-Bench-101: each pair's answers by expected (higher / lower): the answer the prompt shows (content[3])."""
    found: dict[str, dict[str, str]] = defaultdict(dict)
    for probe in stage.probes:
        if probe.pair_id is not None:
            found[probe.pair_id][probe.expected] = probe.content[3]
    return found


def measured_longer(right: int, other: int) -> str | None:
    return None if right == other else "expected" if right > other else "other"


def test_each_probe_records_the_longer_side_as_its_items_measure_it(make_config, lake_dir):
    config = hard_config(make_config, lake_dir)
    stages = stages_of(config)
    for protocol in PAIRWISE:
        probes = stages[protocol].probes
        assert {p.kind for p in probes} == {KINDS[protocol]}
        for p in probes:
            right, other = right_and_other(p)
            assert p.longer == measured_longer(chars(right), chars(other)) is not None, p.probe_id
        by_item = defaultdict(set)
        for p in probes:
            by_item[p.probe_id.rsplit("/", 1)[0]].add(p.longer)
        assert all(len(sides) == 1 for sides in by_item.values())  # both orders of an item agree
        assert sorted(next(iter(s)) for s in by_item.values()).count("expected") == K // 2  # length-controlled
    mtbench = stages["mtbench101_judge"]
    answers = pair_answers(mtbench)
    for p in mtbench.probes:
        pair = answers[p.pair_id]
        assert p.longer == measured_longer(len(pair["higher"]), len(pair["lower"])) is not None, p.probe_id
    longer = {p.pair_id: p.longer for p in mtbench.probes}
    assert sorted(longer.values()).count("expected") in (K // 2, K // 2 + 1)  # the wrong reply longer in half (±1)
    # the hard pairwise items' own flag says the same
    for _, right, wrong, wrong_is_longer in botchat_probes.hard_pairwise_items(config, K):
        assert (chars(wrong) > chars(right)) == wrong_is_longer


def test_the_basic_pairs_record_their_longer_side_too(make_config, lake_dir):
    """golden_vs_useless: the golden reply is longer than "I don't know." on every pair; human_vs_ai: mostly the
    AI-marked twin (its AI line is longer than most chat turns), each as its lengths say."""
    stages = stages_of(hard_config(make_config, lake_dir, k=6, items="basic"), k=6)
    mtbench = stages["mtbench101_judge"]
    assert {p.kind for p in mtbench.probes} == {"golden_vs_useless"}
    assert {p.longer for p in mtbench.probes} == {"expected"}
    for protocol in PAIRWISE:
        for p in stages[protocol].probes:
            right, other = right_and_other(p)
            assert p.kind == "human_vs_ai" and p.longer == measured_longer(chars(right), chars(other))
    assert longer_side("abc", "ab") == "expected" and longer_side(("a", "b"), ("abc",)) == "other"
    assert longer_side(("ab", "c"), "abc") is None


def test_the_longer_side_is_no_part_of_a_probe_cell_s_key(make_config, lake_dir):
    """Probes planned before the field existed keep their cells: the key ignores it."""
    import dataclasses

    stage = stages_of(hard_config(make_config, lake_dir, k=4), k=4)["botchat_arena"]
    config = hard_config(make_config, lake_dir, k=4)
    keys = [c.key for c in stage.plan(config, None).cells]
    stage.probes = [dataclasses.replace(p, longer=None) for p in stage.probes]
    assert [c.key for c in stage.plan(config, None).cells] == keys


# --- through the lake: the view and the check ----------------------------------------------------------------------

def arena_reply(winner: int) -> str:
    """Arena / GTEval: the judge names the AI-involved conversation, the one that does not win."""
    return f"Choice: Conversation {3 - winner}\nReason: the other one reads as a human's."


def rating(score: int) -> str:
    return f"A short explanation.\nRating: [[{score}]]"


def knows_the_answer(probe, pairs) -> str:
    if probe.pair_id is None:
        return arena_reply(1 if probe.variant in ("right_first", "human_first") else 2)
    return rating(9 if probe.expected == "higher" else 2)


def longer_is_better(probe, pairs) -> str:
    """Reads only the lengths: the longer conversation wins; the longer answer of a pair rates 9, the shorter 2."""
    if probe.pair_id is None:
        first, second = probe.content
        return arena_reply(1 if chars(first) > chars(second) else 2)
    other = next(a for e, a in pairs[probe.pair_id].items() if e != probe.expected)
    return rating(9 if len(probe.content[3]) > len(other) else 2)


JUDGES = {"knows the answer": knows_the_answer, "longer is better": longer_is_better}


def judged_night(config, scripted_calls: ScriptedCalls, judge, stages: dict, run_id: str = "r1") -> None:
    """The probe stages run through the cell runner with a scripted judge that answers each probe's prompt."""
    replies = {}
    for stage in stages.values():
        pairs = pair_answers(stage)
        for probe in stage.probes:
            replies[json.dumps(stage.prompt(probe))] = judge(probe, pairs)
    scripted_calls.answer("judge", lambda c: replies[json.dumps(c)])
    lake = registry.open_lake(config.lake)
    for stage in stages.values():
        assert run_stage(stage, config, run_id, lake=lake).computed == len(stage.probes)


def views(config) -> tuple[list[dict], list[dict]]:
    with connect(registry.open_lake(config.lake), board=config.board) as con:
        return verbosity_rows(con), probe_rows(con)


@pytest.mark.parametrize("name", list(JUDGES))
def test_the_view_and_the_check_name_a_judge_that_prefers_the_longer_side(make_config, lake_dir, scripted_calls,
                                                                           name):
    config = hard_config(make_config, lake_dir)
    judged_night(config, scripted_calls, JUDGES[name], stages_of(config))
    rows, probes = views(config)
    by = {r["protocol"]: r for r in rows}
    assert [(r["protocol"], r["kind"]) for r in rows] == [
        ("botchat_arena", "right_vs_wrong"), ("botchat_gteval", "human_vs_marked"),
        ("mtbench101_judge", "golden_vs_wrong")]
    # each order of a pairwise item counts as one item, as judge_probes counts them; a pair of cells counts once
    assert {p: (by[p]["items"], by[p]["n_longer"], by[p]["n_shorter"]) for p in by} == {
        "botchat_arena": (2 * K, K, K), "botchat_gteval": (2 * K, K, K), "mtbench101_judge": (K, K // 2, K // 2)}
    assert {r["protocol"]: r["probes"] for r in probes} == {p: by[p]["items"] for p in by}
    found = findings([], JudgeChecksConfig(items="hard"), probes, verbosity=rows)
    lines = failing(config, registry.open_lake(config.lake), "r1")
    if name == "knows the answer":
        for r in rows:
            assert (r["acc_longer"], r["acc_shorter"], r["gap"], r["longer_pick_rate"]) == (1.0, 1.0, 0.0, 0.5)
            assert r["gap_ci_low"] < 0 < r["gap_ci_high"]
        assert found == [] and lines == []
        return
    # longer is better: right exactly when the right side is the longer one, and always picks the longer side
    for r in rows:
        assert (r["right_longer"], r["right_shorter"], r["gap"], r["longer_pick_rate"]) == (
            r["n_longer"], 0, 1.0, 1.0)
        low_longer, high_longer = wilson(r["n_longer"], r["n_longer"])
        low_shorter, high_shorter = wilson(0, r["n_shorter"])
        assert r["gap_ci_low"] == pytest.approx(1 - ((1 - low_longer) ** 2 + high_shorter ** 2) ** 0.5, abs=2e-4)
        assert r["gap_ci_high"] == pytest.approx(1.0, abs=2e-4)
        assert r["gap_ci_low"] > 0.2
    # its accuracy is half on every kind (the items are length-controlled), so only the verbosity check names it
    assert {r["protocol"]: r["accuracy"] for r in probes} == {p: 0.5 for p in by}
    assert {(f.protocol, f.check) for f in found} >= {(p, "verbosity") for p in by}
    verbosity = [line for line in lines if "prefers the longer side" in line]
    assert len(verbosity) == 3 and all(line.startswith("judge checks: judge on ") for line in verbosity)
    assert "right on 20 of 20 known-answer items where the right side is the longer (100%) against 0 of 20" in \
        verbosity[0]
    with connect(registry.open_lake(config.lake), board=config.board) as con:
        artifact = {r["protocol"]: r for r in summary(config, con)}
    assert all("verbosity" in artifact[p]["checks"] and not artifact[p]["measured"] for p in by)


def test_the_report_shows_the_gap_with_its_interval(make_config, lake_dir, scripted_calls):
    config = hard_config(make_config, lake_dir, k=10)
    judged_night(config, scripted_calls, longer_is_better, stages_of(config, k=10))
    md = render(registry.open_lake(config.lake), board=config.board, families=registry.families())["md"]
    block = md.split("## Can the judge tell?")[1].split("\n## ")[0]
    assert "| right when the right side is longer | right when it is shorter | gap [95% CI] |" in block
    assert "10 / 10 100.0%" in block and "0 / 10 0.0%" in block  # arena and gteval: 5 items, both orders
    assert "| +100.0 points ⚠ [+60.8, +100.0] | 100.0% |" in block  # 10 of 10 against 0 of 10
    assert "| +100.0 points ⚠ [+38.6, +100.0] | 100.0% |" in block  # MT-Bench-101: 5 pairs each way
    assert "prefers the longer side on right\\_vs\\_wrong: right on 10 of 10" in block  # the warnings
    # the judge fails its probes too (50% right): the summary says so first; alone, verbosity has its own phrase
    assert verdict(("j", "p"), None, {("j", "p", "verbosity")}, JudgeChecksConfig()) == \
        "no: it prefers the longer side"


# --- files written before the column ---------------------------------------------------------------------------------

def test_probe_files_without_the_longer_column_still_read(make_config, lake_dir, scripted_calls):
    """A night written by the code before ``longer`` existed (its files lack the column): the probes read as they did
    (judge_probes), the lake reads the column as null, and judge_verbosity has no row for them. A later night with the
    column finds the cells computed and keeps them, so they stay without a longer side until the judge changes."""
    config = hard_config(make_config, lake_dir, k=4)
    stages = stages_of(config, k=4)
    old = Table(PROBES_TABLE.name, pa.schema([f for f in PROBES if f.name != "longer"]), PROBES_TABLE.partition,
                done=PROBES_TABLE.done)
    for stage in stages.values():
        stage.table = old
    judged_night(config, scripted_calls, longer_is_better, stages)
    lake = registry.open_lake(config.lake)
    files = lake.files("judge_probes")
    assert files and all("longer" not in pq.read_schema(f).names for f in files)
    table = lake.read("judge_probes", PROBES)
    assert table.num_rows == 4 * 2 * 3 and set(table.column("longer").to_pylist()) == {None}
    rows, probes = views(config)
    assert rows == [] and {r["protocol"]: r["probes"] for r in probes} == {
        "botchat_arena": 8, "botchat_gteval": 8, "mtbench101_judge": 4}
    again = stages_of(config, k=4)  # today's code: the column in its schema, the cells already computed
    reports = [run_stage(s, config, "r2", lake=lake) for s in again.values()]
    assert all(r.computed == 0 and r.cached == r.planned for r in reports)
    assert views(config)[0] == []
