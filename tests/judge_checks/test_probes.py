"""Known-answer probes on real stages: an oracle judge (it reads the probe and answers right) is right on every probe
and raises no finding; a judge that says the same thing to everything fails its probes, which makes its numbers not
measured and fails the run; probes are cells (an unchanged judge judges none on the next run); the probes are built
the same way every time, the AI line at an index after the seed."""

from __future__ import annotations

import re

import pytest

from dialogbench.run import registry
from dialogbench.botchat.probes import human_dialogues
from dialogbench.cells.runner import run_stage
from dialogbench.judge_checks.check import failing, settings_of, summary
from dialogbench.judge_checks.probe_stage import AI_SELF_IDENTIFICATION
from dialogbench.run.registry import open_lake
from dialogbench.lake.catalog import connect
from dialogbench.mtbench101.probes import USELESS_ANSWER
from dialogbench.report.build import render
from tests.conftest import VERDICT_NO, config_dict

LINE = re.compile(r"^([AB]): (.*?)<chat_end>$", re.M)


def oracle(conversation: list[dict]) -> str:
    """What a perfect judge answers: it finds the AI self-identification (UniEval: at its index; Arena / GTEval: the
    conversation holding it) and rates a useless answer below any other (MT-Bench-101)."""
    text = conversation[-1]["content"]
    if "Rating: [[" in " ".join(m["content"] for m in conversation) or "[[rating]]" in text.lower():
        return "Rating: [[1]]" if f"\n{USELESS_ANSWER}" in text or USELESS_ANSWER in text.split("Assistant")[-1] \
            else "Rating: [[8]]"
    if "Conversation 2:" in text:
        first, second = text.split("Conversation 2:")[-2:]
        first = first.split("Conversation 1:")[-1]
        ai = "1" if AI_SELF_IDENTIFICATION in first else "2" if AI_SELF_IDENTIFICATION in second else None
        return f"Choice: Conversation {ai}\nReason: it says it is an AI." if ai else "Choice: Neither\nReason: human."
    judged = text.split("Now judge this conversation:")[-1]
    lines = [m.group(2) for m in LINE.finditer(judged)]
    if AI_SELF_IDENTIFICATION in lines:
        return f"Choice: Yes\nIndex: {lines.index(AI_SELF_IDENTIFICATION) + 1}\nReason: it says it is an AI."
    return "Choice: No\nIndex: None\nReason: human."


def probe_config(make_config, lake_dir, *, judge_script=None, probes=4, fail=("probes",)):
    data = config_dict(lake_dir, judge_script=judge_script or [VERDICT_NO], n=[6], limit=2,
                       arena={"enabled": True, "n": [6]}, gteval={"enabled": True})
    data["mtbench101"] = {"enabled": True, "judge": "judge", "tasks": ["CM"], "limit": 1}
    data["judge_checks"] = {"probes": probes, "items": "basic", "fail": list(fail), "max_unparsed": 1.0}
    return make_config(data)


def night(config, run_id: str) -> dict:
    lake = registry.open_lake(config.lake)
    return {stage.name: run_stage(stage, config, run_id, lake=lake) for stage in registry.stages(config)}


def probes_view(config) -> dict[tuple[str, str], dict]:
    with connect(open_lake(config.lake), board=config.board) as con:
        rel = con.execute("select * from judge_probes")
        cols = [d[0] for d in rel.description]
        return {(r["protocol"], r["kind"]): r for r in (dict(zip(cols, row)) for row in rel.fetchall())}


def test_an_oracle_judge_is_right_on_every_probe(make_config, lake_dir, scripted_calls):
    scripted_calls.answer("judge", oracle)
    config = probe_config(make_config, lake_dir)
    reports = night(config, "r1")
    assert {name: r.computed for name, r in reports.items() if name.startswith("judge_probe:")} == {
        "judge_probe:botchat_unieval": 8, "judge_probe:botchat_arena": 8, "judge_probe:botchat_gteval": 8,
        "judge_probe:mtbench101_judge": 8}  # 4 dialogues x 2 (human, AI-marked / both orders); 4 tasks x 2
    found = probes_view(config)
    assert set(found) == {("botchat_unieval", "human"), ("botchat_unieval", "ai_marked"),
                          ("botchat_arena", "human_vs_ai"), ("botchat_gteval", "human_vs_ai"),
                          ("mtbench101_judge", "golden_vs_useless")}
    assert {k: (r["probes"], r["accuracy"]) for k, r in found.items()} == {
        ("botchat_unieval", "human"): (4, 1.0), ("botchat_unieval", "ai_marked"): (4, 1.0),
        ("botchat_arena", "human_vs_ai"): (8, 1.0), ("botchat_gteval", "human_vs_ai"): (8, 1.0),
        ("mtbench101_judge", "golden_vs_useless"): (4, 1.0)}
    assert found[("botchat_unieval", "ai_marked")]["index_accuracy"] == 1.0
    assert found[("mtbench101_judge", "golden_vs_useless")]["mean_gap"] == 7.0
    assert failing(config, open_lake(config.lake), "r1") == []
    md = render(open_lake(config.lake), board=config.board, judge_checks=settings_of(config),
                families=registry.families())["md"]
    block = md.split("## Can the judge tell?")[1].split("\n## ")[0]
    assert "| judge | botchat\\_unieval |" in block and "8 / 8 100.0%" in block and "not measured ⚠" not in md

    # probes are cells: the same judge on the next night judges none of them again
    again = night(config, "r2")
    assert all(r.computed == 0 and r.cached == r.planned for n, r in again.items() if n.startswith("judge_probe:"))


def test_a_judge_that_says_no_to_everything_fails_its_probes(make_config, lake_dir):
    config = probe_config(make_config, lake_dir)  # "Choice: No" to every prompt
    night(config, "r1")
    found = probes_view(config)
    assert found[("botchat_unieval", "human")]["accuracy"] == 1.0  # right by accident on the human dialogues...
    assert found[("botchat_unieval", "ai_marked")]["accuracy"] == 0.0  # ...and never finds the AI line
    lines = failing(config, open_lake(config.lake), "r1")
    assert any("judge on botchat_unieval cannot tell: right on 4 of 8 known-answer probes (50%" in line
               for line in lines), lines
    md = render(open_lake(config.lake), board=config.board, judge_checks=settings_of(config),
                families=registry.families())["md"]
    leaderboard = md.split("## Leaderboard")[1].split("\n## ")[0]
    assert "- Judge judge: not measured — " in leaderboard and "50% of probes right on botchat\\_unieval" in leaderboard
    with connect(registry.open_lake(config.lake), board=config.board) as con:
        rows = {r["protocol"]: r for r in summary(config, con)}  # what the run's judges artifact publishes
    assert (rows["botchat_unieval"]["probes"], rows["botchat_unieval"]["probes_right"]) == (8, 4)
    assert not rows["botchat_unieval"]["measured"] and "probes" in rows["botchat_unieval"]["checks"]
    quiet = probe_config(make_config, lake_dir, fail=())
    assert failing(quiet, open_lake(quiet.lake), "r1") == []  # found and shown, but this config does not fail on it


def test_probes_are_the_same_every_time_and_mark_a_line_after_the_seed(make_config, lake_dir):
    config = probe_config(make_config, lake_dir)
    first, second = human_dialogues(config, 10, 8), human_dialogues(config, 10, 8)
    assert first == second and len(first) == 10 and len({seed for seed, _, _ in first}) == 10
    assert all(3 <= index <= len(dialogue) and len(dialogue) >= 6 for _, dialogue, index in first)
    assert {index for _, _, index in first} != {first[0][2]}  # the index moves between dialogues


@pytest.mark.slow
def test_probes_are_judged_in_one_call_per_protocol_and_cached_on_the_next_run(make_config, lake_dir,
                                                                              scripted_calls):
    """What bench/probes.py measures, on a scripted config: the first night computes the probes in one judge call per
    protocol (UniEval here: 3 human dialogues and 3 with an AI line), beside the run's own judging; the next night
    judges none of them again (every probe cell cached)."""
    data = config_dict(lake_dir, judge_script=[VERDICT_NO], n=[6], limit=2)
    data["judge_checks"] = {"probes": 3, "fail": []}
    config = make_config(data)

    def run(run_id: str) -> tuple[dict, dict]:
        lake = registry.open_lake(config.lake)
        reports, calls = {}, {}
        for stage in registry.stages(config):
            scripted_calls.clear()
            reports[stage.name] = run_stage(stage, config, run_id, lake=lake)
            calls[stage.name] = scripted_calls.of("judge")
        return reports, calls

    first, first_calls = run("night-1")
    probes = [name for name in first if name.startswith("judge_probe:")]
    assert probes == ["judge_probe:botchat_unieval"]
    assert first[probes[0]].computed == 6
    assert [len(call.conversations) for call in first_calls[probes[0]]] == [6]  # one call, every probe in it
    assert sum(len(c) for name, c in first_calls.items() if name not in probes) >= 1  # the run's own judging
    second, second_calls = run("night-2")
    assert (second[probes[0]].computed, second[probes[0]].cached) == (0, 6)
    assert second_calls[probes[0]] == []


def test_the_renamed_mtbench101_probes_keep_their_cell_keys(make_config, lake_dir):
    """Lake format 5 renamed the MT-Bench-101 judge protocol ``mtbench101_judge`` (its probes' stage
    ``judge_probe:mtbench101_judge``); the probes' keys still lead with the stage's former name, so a judge probed
    before the rename is not probed again."""
    import copy

    from dialogbench.judge_checks.probe_stage import ProbeStage
    from dialogbench.mtbench101.probes import probes

    config = probe_config(make_config, lake_dir)
    (stage,) = probes(config, 4)
    assert (stage.name, stage.protocol) == ("judge_probe:mtbench101_judge", "mtbench101_judge")
    before = ProbeStage(protocol="mtbench101", version=stage.version, judge=stage.judge, probes=stage.probes,
                        prompt=stage.prompt, output_format=stage.format, grade=stage.grade, sampling=stage.sampling)
    assert before.name == "judge_probe:mtbench101"  # the stage as the code before the rename built it
    keys = [c.key for c in stage.plan(config, None).cells]
    assert len(keys) == 8 and keys == [c.key for c in before.plan(config, None).cells]
    own_name = copy.copy(stage)
    own_name.key_tag = stage.name
    assert keys != [c.key for c in own_name.plan(config, None).cells]  # the tag is what keeps them
