"""MT-Bench-101 through ``dialogbench.mtbench101.stages`` (what the Prefect tasks call), scripted
models and judge, no Prefect: call counts, caching, self-predicted context, the metric views."""

from __future__ import annotations

import pytest

from dialogbench.run import registry
from dialogbench.backends import clear_backends
from dialogbench.run.registry import open_lake
from dialogbench.lake.catalog import connect, data_tests
from dialogbench.mtbench101 import prompts, scoring
from dialogbench.mtbench101.leaderboard import format_mtbench101
from tests import stage_runner as stages
from dialogbench.mtbench101.taxonomy import TASK_CODES, TASKS
from dialogbench.run.runs import new_run_id, sum_reports
from dialogbench.mtbench101.config import answerers
from tests.conftest import PerModel, ScriptedCalls, chatbot, config_dict

# GR (no turn skipped): dialogues 1 (3 turns), 2 (4 turns); CM (first turn not judged): 1145, 1146 (4 turns each).
JUDGED_PER_MODEL = 3 + 4 + 3 + 3


@pytest.fixture
def conversations(scripted_calls: ScriptedCalls) -> PerModel:
    """Every scripted backend call as {model name: [the conversations of each call]}."""
    return PerModel(scripted_calls, lambda call: call.conversations)


@pytest.fixture
def mt_config(make_config, lake_dir):
    def make(*, tasks=("GR", "CM"), limit=2, context="golden", judge_script=None, models=None, **extra):
        data = config_dict(lake_dir, models=models or [chatbot("bot-a", ["a{n}"]), chatbot("bot-b", ["b{n}"])],
                           judge_script=judge_script or ["Rating: [[7]]"])
        data["mtbench101"] = {"enabled": True, "judge": "judge", "context": context,
                              **({"tasks": list(tasks)} if tasks else {}), **({"limit": limit} if limit else {}), **extra}
        return make_config(data)

    return make


def run_all(config, run_id=None) -> dict:
    run_id = run_id or new_run_id()
    clear_backends()
    reports = {m.name: stages.answer(config, m.name, run_id) for m in answerers(config)}
    chunks, planned = stages.plan_judging(config, run_id)
    reports["judge"] = sum_reports([planned, *(stages.judge(config, c, run_id) for c in chunks)])
    reports["chunks"] = len(chunks)
    return reports


def view(config, name: str) -> list[dict]:
    with connect(open_lake(config.lake)) as con:
        return con.sql(f"select * from {name}").to_arrow_table().to_pylist()


def test_disabled_plans_nothing(make_config, lake_dir):
    config = make_config(config_dict(lake_dir))
    assert stages.answer(config, "bot-a", "r").detail == {"enabled": False}
    chunks, report = stages.plan_judging(config, "r")
    assert chunks == [] and report.detail == {"enabled": False}


def test_selection_takes_the_first_dialogues_of_each_task(mt_config):
    chosen = stages.selected_dialogues(mt_config(tasks=("CM", "GR"), limit=2))
    assert [(d.task, d.id) for d in chosen] == [("GR", 1), ("GR", 2), ("CM", 1145), ("CM", 1146)]


def test_golden_one_call_for_all_missing_judged_turns_and_rerun_is_cached(mt_config, conversations):
    config = mt_config()
    reports = run_all(config)
    assert conversations["bot-a"] == conversations["bot-a"][:1]  # one backend call …
    assert [len(c) for c in conversations["bot-a"]] == [JUDGED_PER_MODEL]  # … with every judged turn
    assert reports["bot-a"].computed == JUDGED_PER_MODEL and reports["bot-a"].detail["backend_calls"] == 1
    # Skip-first tasks: turn 0 of CM is not answered; its golden reply is the history of turn 1.
    answers = open_lake(config.lake).read("mtbench101_answers").to_pylist()
    assert {(a["task"], a["turn"]) for a in answers if a["task"] == "CM"} == {("CM", 1), ("CM", 2), ("CM", 3)}
    cm = stages.selected_dialogues(config)[2]
    cm_turn1 = next(c for c in conversations["bot-a"][0] if len(c) == 3 and c[0]["content"] == cm.turns[0].user)
    assert cm_turn1[1] == {"role": "assistant", "content": cm.turns[0].bot}
    # Golden context: the history is the dataset's, never the model's answers.
    gr2_turn3 = [c for c in conversations["bot-a"][0] if len(c) == 7]
    golden = stages.selected_dialogues(config)[1].turns
    assert [m["content"] for m in gr2_turn3[0][1:6:2]] == [t.bot for t in golden[:3]]
    assert reports["judge"].planned == reports["judge"].computed == 2 * JUDGED_PER_MODEL
    assert reports["chunks"] == 1 and [len(c) for c in conversations["judge"]] == [2 * JUDGED_PER_MODEL]
    assert data_tests(open_lake(config.lake)) == {}

    conversations.clear()
    again = run_all(config)
    assert conversations == {}
    assert again["bot-a"].computed == 0 and again["bot-a"].cached == JUDGED_PER_MODEL
    assert again["judge"].computed == 0 and again["judge"].cached == 2 * JUDGED_PER_MODEL and again["chunks"] == 0


def test_answer_chunks(mt_config, conversations):
    """Golden context: ``answer_chunk_size`` cuts a model's missing answers into chunks (one task and
    backend call each); self context ignores it (a dialogue's turns need its earlier answers)."""
    config = mt_config(models=[chatbot("bot-a", ["a{n}"])], answer_chunk_size=5)
    chunks, report = stages.plan(config, "mtbench101_answer:bot-a", "r1")
    assert [len(c.cells) for c in chunks] == [5, 5, 3] and report.planned == 13
    stages.answer(config, "bot-a", "r1")
    assert [len(c) for c in conversations["bot-a"]] == [5, 5, 3]
    selfish = mt_config(models=[chatbot("bot-a", ["a{n}"])], answer_chunk_size=5, context="self")
    assert len(stages.plan(selfish, "mtbench101_answer:bot-a", "r2")[0]) == 1


def test_self_context_one_call_per_turn_with_own_answers(mt_config, conversations):
    config = mt_config(context="self", models=[chatbot("bot-a", ["own answer {n}"])])
    reports = run_all(config)
    # Turn indices 0..3: turn 0 only for GR (CM's first turn is golden context), then all four dialogues.
    assert [len(c) for c in conversations["bot-a"]] == [2, 4, 4, 3]
    assert reports["bot-a"].detail["backend_calls"] == 4 and reports["bot-a"].computed == JUDGED_PER_MODEL
    dialogues = stages.selected_dialogues(config)
    turn1 = conversations["bot-a"][1]
    gr1 = next(c for c in turn1 if c[0]["content"] == dialogues[0].turns[0].user)
    assert gr1[1] == {"role": "assistant", "content": "own answer 1"}  # its own turn-0 answer, not the golden one
    cm1 = next(c for c in turn1 if c[0]["content"] == dialogues[2].turns[0].user)
    assert cm1[1]["content"] == dialogues[2].turns[0].bot  # skip-first task: golden turn 0 kept
    turn2 = conversations["bot-a"][2]
    cm2 = next(c for c in turn2 if c[0]["content"] == dialogues[2].turns[0].user)
    assert [m["content"] for m in cm2[1:4:2]] == [dialogues[2].turns[0].bot, "own answer 3"]
    # The judge sees the same history the answer saw.
    judge_inputs = [c[1]["content"] for c in conversations["judge"][0]]
    assert any("Assistant: own answer 1" in text and "Assistant: own answer 3" in text for text in judge_inputs)
    judged = [text.split("\n\nThe reference solution is:")[0] for text in judge_inputs]
    assert all(f"Assistant: {dialogues[0].turns[0].bot}" not in text for text in judged)  # only in the reference:
    gr1 = [text.split("\n\nThe reference solution is:")[1] for text in judge_inputs
           if "\n\nThe reference solution is:" in text and dialogues[0].turns[0].user in text]
    assert len(gr1) == 3 and all(f"Assistant: {dialogues[0].turns[0].bot}" in text for text in gr1)  # golden dialogue
    assert run_all(config)["bot-a"].computed == 0  # a rerun answers nothing
    golden = mt_config(context="golden", models=[chatbot("bot-a", ["own answer {n}"])])
    assert run_all(golden)["bot-a"].computed == JUDGED_PER_MODEL  # the other mode's answers are other cells


def test_changing_one_task_prompt_rejudges_only_that_task(mt_config, conversations, monkeypatch):
    config = mt_config()
    run_all(config)
    monkeypatch.setitem(prompts.TASK_PROMPTS, "CM", prompts.TASK_PROMPTS["CM"] + "\nBe strict.")
    conversations.clear()
    again = run_all(config)
    assert "bot-a" not in conversations  # answers cached
    assert again["judge"].computed == 2 * 6 and again["judge"].cached == 2 * 7
    judged = conversations["judge"][0]
    assert all("Be strict." in c[0]["content"] for c in judged)
    turns = view(config, "mtbench101_turns")
    assert len(turns) == 2 * JUDGED_PER_MODEL and all(t["parsed"] for t in turns)


GR1 = ["Rating: [[8]]", "Rating: [[6]]", "Rating: [[9]]"]                    # min 6
GR2 = ["Rating: [[7]]", "**Rating:** [[7]]", "Rating: 5", "Rating: [[10]]"]  # min 5
CM1 = ["Rating: [[9]]", "Rating: [[8]]", "Rating: [[9]]"]                    # min 8
CM2 = ["Rating: [[4]]", "I cannot rate this.", "Rating: [[9]]"]              # unparsed → left out


def test_views_match_hand_computed_scores(mt_config):
    config = mt_config(models=[chatbot("bot-a", ["a{n}"])], judge_script=GR1 + GR2 + CM1 + CM2)
    reports = run_all(config)
    assert reports["judge"].detail["unparsed"] == 1
    tasks = {r["task"]: r for r in view(config, "mtbench101_tasks")}
    assert tasks["GR"]["score"] == pytest.approx(5.5) and tasks["GR"]["dialogues"] == 2 and tasks["GR"]["unparsed"] == 0
    assert tasks["CM"]["score"] == pytest.approx(8.0) and tasks["CM"]["dialogues"] == 1 and tasks["CM"]["unparsed"] == 1
    abilities = {r["ability"]: r for r in view(config, "mtbench101_abilities")}
    assert abilities["Memory"]["score"] == pytest.approx(8.0) and abilities["Memory"]["tier"] == "Perceptivity"
    assert abilities["Reasoning"]["score"] is None and abilities["Reasoning"]["tasks_scored"] == 1  # MR missing
    (row,) = view(config, "mtbench101_leaderboard")
    assert [k for k in row if k in TASK_CODES] == list(TASK_CODES)
    assert row["GR"] == pytest.approx(5.5) and row["CM"] == pytest.approx(8.0) and row["MR"] is None
    assert row["avg"] is None and row["tasks_scored"] == 2
    assert row["avg_scored"] == pytest.approx((5.5 + 8.0) / 2)  # the mean over the tasks scored, beside Table 3's avg
    printed = format_mtbench101(registry.leaderboards(config)["mtbench101"])  # the CLI shows it, marked partial
    assert "6.75 partial: 2 of 13 tasks" in printed and "'partial': the mean over the tasks scored so far" in printed
    turns = view(config, "mtbench101_turns")
    unparsed = [t for t in turns if not t["parsed"]]
    assert [(t["dialogue_id"], t["turn"], t["score"], t["judged"]) for t in unparsed] == [("1146", 2, None, True)]
    curves = {(r["task"], r["turn"]): r for r in view(config, "mtbench101_turn_curves")}
    assert curves[("GR", 0)]["score"] == pytest.approx(7.5) and curves[("GR", 0)]["n"] == 2
    assert curves[("CM", 2)]["score"] == pytest.approx(8.0) and curves[("CM", 2)]["n"] == 1
    assert ("CM", 0) not in curves


def test_missing_answer_leaves_the_dialogue_unscored(mt_config):
    config = mt_config(models=[chatbot("bot-a", ["a{n}", "a{n}", "!error:boom"])], tasks=("MR",), limit=2)
    reports = run_all(config)
    assert reports["bot-a"].failed == 1 and reports["judge"].detail["unanswered"] == 1
    # the unanswered turn's judgment is blocked, neither cached nor computed
    assert (reports["judge"].planned, reports["judge"].cached, reports["judge"].blocked) == (4, 0, 1)
    assert reports["judge"].computed == 3
    (task,) = view(config, "mtbench101_tasks")
    # a turn that was never answered is missing, not an unparsed rating
    assert (task["missing"], task["unparsed"], task["dialogues"]) == (1, 0, 1)


def test_full_leaderboard_row_and_scoring_agree(mt_config):
    script = ["Rating: [[6]]", "Rating: [[9]]", "Rating: [[7]]"]
    config = mt_config(tasks=None, limit=1, models=[chatbot("bot-a", ["a{n}"])], judge_script=script)
    run_all(config)
    (row,) = view(config, "mtbench101_leaderboard")
    assert row["tasks_scored"] == 13 and row["avg"] is not None and row["avg_scored"] == pytest.approx(row["avg"])
    printed = format_mtbench101(registry.leaderboards(config)["mtbench101"])
    assert f" {row['avg']:.2f} " in printed and "partial" not in printed
    turns = view(config, "mtbench101_turns")
    by_dialogue: dict[tuple[str, str], dict[int, int]] = {}
    for t in turns:
        by_dialogue.setdefault((t["task"], t["dialogue_id"]), {})[t["turn"]] = t["score"]
    lengths = {str(d.id): len(d.turns) for d in stages.selected_dialogues(config)}
    expected = scoring.leaderboard(tasks=scoring.task_scores(dialogue_scores=[
        (task, scoring.dialogue_score(task=task, n_turns=lengths[d], ratings=r)) for (task, d), r in by_dialogue.items()]))
    assert row["avg"] == pytest.approx(expected.overall)
    assert all(row[c] == pytest.approx(expected.tasks[c]) for c in TASK_CODES)
    abilities = {r["ability"]: r["score"] for r in view(config, "mtbench101_abilities")}
    assert abilities == pytest.approx(expected.abilities)


def test_taxonomy_view_is_taxonomy_py(make_config, lake_dir):
    rows = view(make_config(config_dict(lake_dir)), "mtbench101_taxonomy order by position")
    assert [(r["task"], r["name"], r["ability"], r["tier"]) for r in rows] == [
        (t.code, t.name, t.ability, t.tier) for t in TASKS]


def test_views_exist_on_an_empty_lake(make_config, lake_dir):
    config = make_config(config_dict(lake_dir))
    for name in ("mtbench101_turns", "mtbench101_tasks", "mtbench101_abilities", "mtbench101_leaderboard",
                 "mtbench101_turn_curves", "mtbench101_answers"):
        assert view(config, name) == []


def test_views_read_lakes_written_before_the_score_and_task_columns(make_config, lake_dir):
    """Rating and plans files that lack a column appended later (``score``, ``task``) still read, as nulls."""
    import pyarrow as pa

    from dialogbench.lake.schemas import PLANS
    from dialogbench.mtbench101.tables import RATINGS_TABLE

    config = make_config(config_dict(lake_dir))
    lake = open_lake(config.lake)
    old_ratings = pa.schema([f for f in RATINGS_TABLE.schema if f.name != "score"])
    old_plans = pa.schema([f for f in PLANS if f.name != "task"])
    old = [{"cell_key": "k", "protocol": "mtbench101_judge", "parsed": True}]
    lake.write(RATINGS_TABLE.name, pa.Table.from_pylist(old, schema=old_ratings), partition={"judge": "j"})
    lake.write("plans", pa.Table.from_pylist([{"run_id": "r", "stage": "botchat_unieval", "cell_key": "k"}],
                                             schema=old_plans), partition={"stage": "botchat_unieval"})
    assert view(config, "mtbench101_turns") == [] and view(config, "mtbench101_leaderboard") == []
    (row,) = view(config, "mtbench101_judgments")
    assert row["score"] is None


def test_history_over_the_context_window_drops_the_oldest_turns():
    from tests.mtbench101.fit_oracle import fit_conversation

    pairs = [("u1 " * 50, "b1 " * 50), ("u2 " * 50, "b2 " * 50), ("u3", "b3")]

    def count(messages):
        return sum(len(m["content"].split()) for m in messages)

    messages, dropped = fit_conversation(pairs, "now?", count_tokens=count, budget=120)
    assert dropped == 1 and messages[0]["content"].startswith("u2") and messages[-1]["content"] == "now?"
    messages, dropped = fit_conversation(pairs, "now?", count_tokens=count, budget=2)
    assert dropped == 3 and messages == [{"role": "user", "content": "now?"}]
    messages, dropped = fit_conversation(pairs, "now?", count_tokens=count, budget=10_000)
    assert dropped == 0 and len(messages) == 7


# OpenCompass's rules beside the project's (opencompass summarizers/subjective/mtbench101.py): the first [n] of a
# reply, no range check; a dialogue with an unreadable turn scores the minimum of its other turns.
OC_GR1 = ["Rating: [[7]]", "I cannot rate this.", "Rating: [[5]]"]          # project: left out; OpenCompass: min(7, 5)
OC_GR2 = ["A [4]-point answer at best? No: it is correct. Rating: [[9]]",     # project 9, OpenCompass 4
          "Rating: [[8]]", "Rating: [[8]]", "Rating: [[10]]"]                # project: min 8; OpenCompass: min 4


def test_opencompass_rules_beside_the_projects(mt_config):
    config = mt_config(models=[chatbot("bot-a", ["a{n}"])], tasks=("GR",), judge_script=OC_GR1 + OC_GR2)
    run_all(config)
    turns = {(t["dialogue_id"], t["turn"]): t for t in view(config, "mtbench101_turns")}
    assert [(t["score"], t["opencompass_score"], t["opencompass_differs"]) for _, t in sorted(turns.items())] == [
        (7, 7, False), (None, None, False), (5, 5, False), (9, 4, True), (8, 8, False), (8, 8, False), (10, 10, False)]
    (task,) = view(config, "mtbench101_tasks")
    assert (task["score"], task["dialogues"], task["unparsed"]) == (8.0, 1, 1)  # default: dialogue 1 left out
    assert (task["opencompass_score"], task["opencompass_dialogues"]) == (pytest.approx(4.5), 2)  # mean(5, 4)
    (row,) = view(config, "mtbench101_leaderboard")
    assert row["GR"] == pytest.approx(8.0) and row["opencompass_avg"] is None  # 1 of 13 tasks
    assert (row["opencompass_avg_scored"], row["opencompass_tasks_scored"]) == (pytest.approx(4.5), 1)
    (reliability,) = view(config, "judge_reliability where protocol = 'mtbench101_judge'")
    assert (reliability["judge"], reliability["comparisons"], reliability["unparsed"],
            reliability["opencompass_differs"], reliability["flips"]) == ("judge", 7, 1, 1, None)
    assert data_tests(open_lake(config.lake)) == {}


def test_opencompass_reads_out_of_range_and_unbracketed_ratings_otherwise(mt_config):
    """[[11]]: unparsed here, 11 for OpenCompass (no range check); a bare 'Rating: 6': 6 here, nothing there."""
    script = ["Rating: [[11]]", "Rating: 6", "Rating: [[3]]"]
    config = mt_config(models=[chatbot("bot-a", ["a{n}"])], tasks=("GR",), limit=1, judge_script=script)
    run_all(config)
    turns = sorted(view(config, "mtbench101_turns"), key=lambda t: t["turn"])
    assert [(t["score"], t["opencompass_score"]) for t in turns] == [(None, 11), (6, None), (3, 3)]
    (task,) = view(config, "mtbench101_tasks")
    assert (task["score"], task["unparsed"], task["opencompass_score"]) == (None, 1, 3)
    (reliability,) = view(config, "judge_reliability where protocol = 'mtbench101_judge'")
    assert reliability["opencompass_differs"] == 2
