"""``mtbench101_answers.question`` (the user message each answer answers, stored by the answer stage) and
``mtbench101_turns.question`` (from the judged answer, else from any stored answer to the same dialogue turn; null
in lakes whose answers were written before the column), through the real stages with scripted models."""

from __future__ import annotations

import dataclasses

import pyarrow as pa

from dialogbench.run.registry import open_lake
from dialogbench.lake.catalog import data_tests
from dialogbench.mtbench101.answer_stage import AnswerTurns
from dialogbench.mtbench101.tables import ANSWERS_TABLE
from tests import stage_runner as stages
from tests.conftest import chatbot
from tests.mtbench101.test_stages import mt_config, run_all, view  # noqa: F401  (mt_config is a fixture)


def dataset_questions(config) -> dict[tuple[str, str, int], str]:
    return {(d.task, str(d.id), i): t.user for d in stages.selected_dialogues(config) for i, t in enumerate(d.turns)}


def test_every_turn_carries_the_question_it_answers(mt_config):
    config = mt_config()
    run_all(config)
    questions = dataset_questions(config)
    answers = view(config, "mtbench101_answers")
    assert answers and all(a["question"] == questions[(a["task"], a["dialogue_id"], a["turn"])] for a in answers)
    turns = view(config, "mtbench101_turns")
    assert len(turns) == 2 * 13 and all(t["judged"] for t in turns)
    assert all(t["question"] == questions[(t["task"], t["dialogue_id"], t["turn"])] for t in turns)
    assert len({t["question"] for t in turns}) == 13  # one per judged turn: not one text for all
    assert data_tests(open_lake(config.lake)) == {}


def test_a_turn_not_judged_takes_its_question_from_any_stored_answer(mt_config):
    """bot-a's second answer fails (GR dialogue 1, turn 1): that turn has no judgment, yet its question comes from
    bot-b's answer to it."""
    config = mt_config(tasks=("GR",), limit=1, models=[chatbot("bot-a", ["a{n}", "!error:boom", "a{n}"]),
                                                        chatbot("bot-b", ["b{n}"])])
    run_all(config)
    question = dataset_questions(config)[("GR", "1", 1)]
    turns = {(t["model"], t["turn"]): t for t in view(config, "mtbench101_turns")}
    assert not turns[("bot-a", 1)]["judged"] and turns[("bot-a", 1)]["question"] == question
    assert turns[("bot-b", 1)]["judged"] and turns[("bot-b", 1)]["question"] == question


def test_a_turn_nobody_answered_has_no_question(mt_config):
    config = mt_config(tasks=("GR",), limit=1, models=[chatbot("bot-a", ["a{n}", "!error:boom", "a{n}"])])
    run_all(config)
    turns = {t["turn"]: t for t in view(config, "mtbench101_turns")}
    assert not turns[1]["judged"] and turns[1]["question"] is None
    assert turns[0]["question"] == dataset_questions(config)[("GR", "1", 0)]


def test_answers_written_before_the_column_read_as_null_questions(mt_config, monkeypatch):
    """An answers file without `question` (as older versions wrote it) still reads; its turns' question is null."""
    config = mt_config(tasks=("GR",), limit=1, models=[chatbot("bot-a", ["a{n}"])])
    old = pa.schema([f for f in ANSWERS_TABLE.schema if f.name != "question"])
    monkeypatch.setattr(AnswerTurns, "table", dataclasses.replace(ANSWERS_TABLE, schema=old))
    run_all(config)
    monkeypatch.undo()
    turns = view(config, "mtbench101_turns")
    assert len(turns) == 3 and all(t["judged"] and t["question"] is None for t in turns)
    assert all(a["question"] is None for a in view(config, "mtbench101_answers"))
