"""The per-task judge prompts (Figs. 21–34) and the rendering of the judged dialogue."""

from __future__ import annotations

import re

import pytest

from dialogbench.mtbench101.dataset import Turn
from dialogbench.mtbench101.prompts import (DIALOGUE_FRAMING, INITIAL_INSTRUCTION, SCORING_FORMAT, TASK_PROMPTS,
                                            TRANSCRIPTION_NOTES, judge_messages, reference_text, system_prompt)
from dialogbench.mtbench101.taxonomy import TASK_CODES

# One phrase from each task's criteria, as printed in its figure.
CRITERIA = {
    "CM": "appropriately recalls relevant details from earlier parts of the conversation",
    "SI": "In the first round, ‘Human’ will present a task request without providing details",
    "AR": "correct understanding of referential information from questions asked by ‘Human,’",
    "TS": "detect and acknowledge the change in topic introduced by ‘Human’",
    "CC": "must not be influenced by the question-and-answer pattern from the previous dialogue",
    "CR": "must maintain the same main idea as the Assistant’s response in the first round",
    "FR": "must comply with the specific rewriting requirements set forth by the Human in the current round",
    "SC": "If the ‘Human’ has correctly identified an error, the AI assistant must acknowledge the mistake",
    "SA": "must confidently maintain its original answer",
    "MR": "‘### reference solution ###’ for the mathematical problem",
    "GR": "‘### reference solution ###’ for the specific problem",
    "IC": "use counter-questions for clarification",
    "PI": "ask relevant follow-up questions or propose new topics",
}


@pytest.mark.parametrize("task", TASK_CODES)
def test_each_task_prompt_has_instruction_criteria_guidelines_and_rating_format(task):
    prompt = system_prompt(task)
    assert prompt.startswith(INITIAL_INSTRUCTION) and prompt.endswith(SCORING_FORMAT)
    assert CRITERIA[task] in prompt
    assert "1-3 points" in prompt and "10 points" in prompt
    assert "‘Rating: [[score]]’, for example ‘Rating: [[6]]’" in prompt
    assert "LAST ROUND" in prompt


def test_thirteen_tasks_twelve_figures():
    assert set(TASK_PROMPTS) == set(TASK_CODES)
    assert TASK_PROMPTS["CR"] == TASK_PROMPTS["FR"]  # Fig. 28 serves both rephrasing tasks
    assert len(set(TASK_PROMPTS.values())) == 12


@pytest.mark.parametrize("task", TASK_CODES)
def test_no_extraction_artifacts_left(task):
    text = system_prompt(task)
    for glued in ("AIassistant", "Whenscoring", "Weaim", "Thecriteria", "10points", "thereasoning", "model(AI"):
        assert glued not in text
    assert not re.search(r"[a-z]-\n", text)  # no line-end hyphenation
    assert "  " not in text
    assert TRANSCRIPTION_NOTES


HISTORY = [Turn(user="Q1 golden", bot="A1 golden"), Turn(user="Q2 golden", bot="A2 golden")]


def test_dialogue_is_rendered_with_only_the_last_reply_from_the_model():
    messages = judge_messages(task="CM", history_turns=HISTORY, user_message="Q3", answer="MODEL ANSWER")
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == system_prompt("CM")
    assert messages[1]["content"] == (
        "The dialogue need to be judged is:\n"  # the authors' code's framing line, word for word
        "***\nHuman: Q1 golden\n\nAssistant: A1 golden\n\nHuman: Q2 golden\n\nAssistant: A2 golden"
        "\n\nHuman: Q3\n\nAssistant: MODEL ANSWER\n***")
    body = messages[1]["content"]
    assert body.count("Assistant:") == 3 and body.count("MODEL ANSWER") == 1
    assert body.rindex("Assistant:") < body.index("MODEL ANSWER")  # the last round's reply is the answer


def test_first_turn_has_no_history_and_tuples_are_accepted():
    messages = judge_messages(task="PI", history_turns=[], user_message="Hi", answer="Hello?")
    assert messages[1]["content"] == f"{DIALOGUE_FRAMING}\n***\nHuman: Hi\n\nAssistant: Hello?\n***"
    as_tuples = judge_messages(task="CM", history_turns=[("Q1 golden", "A1 golden")], user_message="Q", answer="A")
    assert "Human: Q1 golden\n\nAssistant: A1 golden\n\nHuman: Q\n\nAssistant: A" in as_tuples[1]["content"]


@pytest.mark.parametrize("task", ["MR", "GR"])
def test_reasoning_tasks_carry_the_reference_solution(task):
    messages = judge_messages(task=task, history_turns=HISTORY, user_message="Q3", answer="42",
                              reference="The answer is 41.")
    assert messages[1]["content"].endswith("***\n\nThe reference solution is:\n###\nThe answer is 41.\n###")
    with pytest.raises(ValueError, match="reference"):
        judge_messages(task=task, history_turns=HISTORY, user_message="Q3", answer="42")


GOLDEN = [*HISTORY, Turn(user="Q3", bot="The answer is 41.")]  # the judged turn last, with its golden reply


def test_reference_forms():
    """``dialogue`` (the authors' code): every golden turn through the judged one, its golden reply included, as
    rounds; ``turn``: the judged turn's golden reply alone."""
    assert reference_text("dialogue", GOLDEN) == (
        "Human: Q1 golden\n\nAssistant: A1 golden\n\nHuman: Q2 golden\n\nAssistant: A2 golden"
        "\n\nHuman: Q3\n\nAssistant: The answer is 41.")
    assert reference_text("turn", GOLDEN) == "The answer is 41."
    assert reference_text("dialogue", [("Q", "A")]) == "Human: Q\n\nAssistant: A"  # a first turn: one round
    with pytest.raises(ValueError, match="unknown reference form 'both'"):
        reference_text("both", GOLDEN)
    with pytest.raises(ValueError, match="no golden turn"):
        reference_text("turn", [])


def test_dialogue_reference_in_the_judge_message():
    reference = reference_text("dialogue", GOLDEN)
    body = judge_messages(task="MR", history_turns=HISTORY, user_message="Q3", answer="42", reference=reference)[1]
    judged, shown = body["content"].split("\n\nThe reference solution is:\n###\n")
    assert judged.startswith(DIALOGUE_FRAMING + "\n***\n") and judged.endswith("Assistant: 42\n***")
    assert shown == reference + "\n###"
    assert "The answer is 41." not in judged  # the golden reply of the judged turn is only in the reference


def test_other_tasks_ignore_a_reference_and_unknown_tasks_fail():
    messages = judge_messages(task="TS", history_turns=[], user_message="Q", answer="A", reference="golden")
    assert "golden" not in messages[1]["content"]
    with pytest.raises(KeyError, match="unknown MT-Bench-101 task 'XX'"):
        judge_messages(task="XX", history_turns=[], user_message="Q", answer="A")
