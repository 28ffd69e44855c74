"""The MR / GR reference solution (``mtbench101.reference``): the golden dialogue so far (the default, as OpenCompass's
``eval_prompt_construct`` passes it) or the judged turn's golden reply alone; recorded per judgment and in
``mtbench101_turns``, part of MR's and GR's prompt version only. Every judge message opens with the authors' framing
line (``prompts.DIALOGUE_FRAMING``, render version 2)."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from dialogbench.cells.keys import fingerprint
from dialogbench.lake.catalog import data_tests
from dialogbench.lake.schemas import PLANS
from dialogbench.mtbench101 import judge_stage, prompts
from dialogbench.mtbench101.family import prompts as family_prompts
from dialogbench.mtbench101.judge_stage import RATING_VERSION, task_prompt_version
from dialogbench.mtbench101.probes import judge_probes
from dialogbench.mtbench101.tables import RATINGS_TABLE
from dialogbench.mtbench101.taxonomy import TASK_CODES
from dialogbench.run.registry import open_lake
from tests import stage_runner as stages
from tests.conftest import chatbot, config_dict
from tests.mtbench101.test_stages import run_all, view

REFERENCE = "\n\nThe reference solution is:\n###\n"
TURNS = {"GR": 3 + 4, "MR": 2 + 2, "CM": 3 + 3}  # judged turns of the first two dialogues of each task


@pytest.fixture
def mt(make_config, lake_dir):
    def make(**section):
        data = config_dict(lake_dir, models=[chatbot("bot-a", ["answer {n}"])], judge_script=["Rating: [[6]]"])
        data["mtbench101"] = {"enabled": True, "judge": "judge", "tasks": list(TURNS), "limit": 2, **section}
        return make_config(data)

    return make


def by_turn(config, conversations: list[list[dict]]) -> dict[tuple[int, int], str]:
    """The judge's user message of each judged turn, by (dialogue id, turn): the turn is told by its user message."""
    out = {}
    for dialogue in stages.selected_dialogues(config):
        for i, turn in enumerate(dialogue.turns):
            found = [c[1]["content"] for c in conversations
                     if f"Human: {turn.user}\n\nAssistant: answer " in c[1]["content"].split(REFERENCE)[0]]
            if found:
                out[(dialogue.id, i)] = found[-1]
    return out


def test_the_golden_dialogue_so_far_is_the_default_reference(mt, scripted_calls):
    config = mt()
    assert config.mtbench101.reference == "dialogue"
    run_all(config)
    judged = scripted_calls.sent("judge")
    assert len(judged) == sum(TURNS.values())
    assert all(c[1]["content"].startswith("The dialogue need to be judged is:\n***\nHuman: ") for c in judged)
    dialogues = {d.id: d for d in stages.selected_dialogues(config)}
    messages = by_turn(config, judged)
    for (dialogue_id, i), text in messages.items():
        d = dialogues[dialogue_id]
        if d.task in prompts.REFERENCE_TASKS:
            body, reference = text.split(REFERENCE)
            golden = "\n\n".join(f"Human: {t.user}\n\nAssistant: {t.bot}" for t in d.turns[:i + 1])
            assert reference == golden + "\n###"  # every golden turn through this one, its golden reply included
        else:
            assert REFERENCE not in text
    assert {dialogues[d].task for d, _ in messages} == set(TURNS) and len(messages) == sum(TURNS.values())
    rows = view(config, "mtbench101_judgments")
    assert {(r["item_id"].split(":")[0] in {str(d.id) for d in dialogues.values() if d.task == "CM"}, r["reference"])
            for r in rows} == {(True, None), (False, "dialogue")}
    turns = view(config, "mtbench101_turns")
    assert {(t["task"], t["reference"]) for t in turns} == {("GR", "dialogue"), ("MR", "dialogue"), ("CM", None)}
    assert data_tests(open_lake(config.lake)) == {}


def test_the_turn_reference_rejudges_mr_and_gr_only(mt, scripted_calls):
    run_all(mt())
    scripted_calls.clear()
    config = mt(reference="turn")
    again = run_all(config)
    assert again["bot-a"].computed == 0  # the answers do not depend on it
    assert again["judge"].computed == TURNS["GR"] + TURNS["MR"] and again["judge"].cached == TURNS["CM"]
    dialogues = {d.id: d for d in stages.selected_dialogues(config)}
    messages = by_turn(config, scripted_calls.sent("judge"))
    assert len(messages) == TURNS["GR"] + TURNS["MR"]
    for (dialogue_id, i), text in messages.items():
        assert text.split(REFERENCE)[1] == dialogues[dialogue_id].turns[i].bot + "\n###"  # the golden reply alone
    turns = view(config, "mtbench101_turns")
    assert {(t["task"], t["reference"]) for t in turns} == {("GR", "turn"), ("MR", "turn"), ("CM", None)}
    assert data_tests(open_lake(config.lake)) == {}
    assert run_all(mt())["judge"].computed == 0  # back to the dialogue form: its judgments are still stored


def test_the_reference_form_is_in_mr_and_gr_prompt_versions_only():
    for task in TASK_CODES:
        forms = {task_prompt_version(task, form) for form in prompts.REFERENCE_FORMS}
        assert len(forms) == (2 if task in prompts.REFERENCE_TASKS else 1), task
    assert task_prompt_version("MR") == task_prompt_version("MR", "dialogue")


def test_the_framing_line_bumped_every_tasks_prompt_version():
    """Render version 2 (the framing line): every task's version differs from the one render version 1 gave, so no
    judgment made without the framing is read as one made with it."""
    assert judge_stage.RENDER_VERSION == "mtbench101-render-v2"
    for task in TASK_CODES:
        before = fingerprint(prompts.system_prompt(task), task in prompts.REFERENCE_TASKS, "mtbench101-render-v1",
                             RATING_VERSION)
        assert task_prompt_version(task, "turn") != before


def test_prompt_versions_and_probes_follow_the_configured_form(mt):
    dialogue, turn = mt(), mt(reference="turn")
    assert {t for t in TASK_CODES if family_prompts(dialogue)[t] != family_prompts(turn)[t]} == {"MR", "GR"}
    judge = dialogue.model("judge")
    assert judge_probes(dialogue, 2, judge).version != judge_probes(turn, 2, judge).version  # probe cells differ too


def test_turns_view_names_the_turn_form_for_mr_and_gr_judgments_stored_before_the_column(mt):
    """A judged MR turn whose stored row lacks ``reference`` (an older file) was shown the turn's reply alone."""
    config = mt()
    lake = open_lake(config.lake)
    at = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    plans = [{"run_id": "r-old", "stage": "mtbench101_judge", "cell_key": key, "item_id": item, "model": "bot-a",
              "judge": "judge", "task": task, "roles": [("model", "bot-a")], "scope": ["bot-a"],
              "board": config.board, "created_at": at} for key, item, task in (("old-mr", "449:0", "MR"),
                                                                                ("old-cm", "1145:1", "CM"))]
    lake.write("plans", pa.Table.from_pylist(plans, schema=PLANS), partition={"stage": "mtbench101_judge",
                                                                              "run_id": "r-old"})
    older = pa.schema([f for f in RATINGS_TABLE.schema if f.name != "reference"])
    rows = [{"cell_key": key, "protocol": "mtbench101_judge", "item_id": item, "model": "bot-a", "judge": "judge",
             "parsed": True, "score": 5, "created_at": at} for key, item in (("old-mr", "449:0"), ("old-cm", "1145:1"))]
    lake.write(RATINGS_TABLE.name, pa.Table.from_pylist(rows, schema=older), partition={"judge": "judge"})
    assert {(t["task"], t["reference"]) for t in view(config, "mtbench101_turns")} == {("MR", "turn"), ("CM", None)}
    assert {r["reference"] for r in view(config, "mtbench101_judgments")} == {None}
