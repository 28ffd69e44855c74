"""UniEval: the judge prompt, tolerant-but-strict verdict parsing, pass@N, the protocol version."""

from __future__ import annotations

import copy
import json

import pytest

from dialogbench.botchat.prompts import UNIEVAL_PROMPT
from dialogbench.botchat.unieval import ANSWER_REQUEST, Verdict, build_prompt, load_examples, parse_verdict, passes_at, protocol_version, render_dialogue
from tests.conftest import EXAMPLES

DIALOGUE = ["Hi, how was the trip?", "Long. The train was late.", "Oh no, how late?", "Two hours, can you believe it?"]


@pytest.fixture(scope="module")
def examples():
    return load_examples(EXAMPLES)


def test_render_dialogue_alternates_speakers():
    assert render_dialogue(DIALOGUE[:3]) == (
        "\nA: Hi, how was the trip?<chat_end>\n\nB: Long. The train was late.<chat_end>\n\nA: Oh no, how late?<chat_end>\n")


def test_render_dialogue_matches_example_format(examples):
    """The vendored examples use the same ``\\nA: …<chat_end>\\n\\nB: …`` layout as render_dialogue."""
    conv = examples[2]["conv"]  # (the upstream examples 0 and 1 carry quirks of their own)
    chats = [c.strip() for c in conv.split("<chat_end>") if c.strip()]
    utterances = [c[3:] for c in chats]
    assert [c[:3] for c in chats] == [("A: ", "B: ")[i % 2] for i in range(len(chats))]
    assert render_dialogue(utterances) == conv


def test_build_prompt(examples):
    prompt = build_prompt(DIALOGUE, examples)
    assert len(prompt) == 1 and prompt[0]["role"] == "user"
    text = prompt[0]["content"]
    assert text.startswith(UNIEVAL_PROMPT.strip())
    assert len(examples) == 4
    positions = []
    for i, example in enumerate(examples, 1):
        assert f"Example {i}:" in text
        positions.append(text.index(example["conv"].rstrip()))
        assert f"Choice: {example['choice']}\nIndex: {example['index']}\nReason: {example['reason'].strip()}" in text
    assert positions == sorted(positions)
    # the dialogue to judge comes after every example, then the request for the answer
    assert text.endswith(render_dialogue(DIALOGUE).rstrip() + "\n\n" + ANSWER_REQUEST)
    assert text.rindex("A: Hi, how was the trip?") > max(positions)


def test_examples_cover_both_choices(examples):
    assert {e["choice"] for e in examples} == {"Yes", "No"}


def test_load_examples_rejects_incomplete(tmp_path):
    bad = tmp_path / "examples.json"
    bad.write_text(json.dumps([{"conv": "x", "choice": "No", "index": "None"}]))
    with pytest.raises(ValueError, match="reason"):
        load_examples(bad)


@pytest.mark.parametrize("text, choice, index", [
    ("Choice: No\nIndex: None\nReason: The conversation is natural.", "No", None),
    ("Choice: Yes\nIndex: 3\nReason: B repeats A.", "Yes", 3),
    ("**Choice:** Yes\n**Index:** 4\n**Reason:** too long for a chat.", "Yes", 4),
    ("**Choice: No**\n**Index: None**\n**Reason:** fine.", "No", None),
    ("- Choice: **Yes**\n- Index: **2**\n- Reason: off topic", "Yes", 2),
    ("choice: yes\nindex: 1\nreason: robotic", "Yes", 1),
    ("CHOICE: NO", "No", None),
    ("Let me look at each chat. Chat 3 changes topic abruptly.\n\nChoice: Yes\nIndex: 3\nReason: abrupt.", "Yes", 3),
    ("Sure! Here is my answer:\nChoice: No\nIndex: None\nReason: smooth", "No", None),
    ("Choice: Yes, Index: 2, Reason: the reply is too formal.", "Yes", 2),
    ("Choice: Yes\nIndex: 4", "Yes", 4),
])
def test_parse_verdict_realistic_outputs(text, choice, index):
    verdict = parse_verdict(text, n_utterances=4)
    assert verdict.parsed, verdict.error
    assert (verdict.choice, verdict.index) == (choice, index)
    assert verdict.error is None


def test_parse_verdict_reason():
    verdict = parse_verdict("Choice: No\nIndex: None\nReason: The conversation is smooth.", n_utterances=4)
    assert verdict.reason == "The conversation is smooth."


@pytest.mark.parametrize("text, fragment", [
    ("Choice: Yes\nReason: chat 2 is odd", "without a numeric Index"),
    ("Choice: Yes\nIndex: None\nReason: hmm", "without a numeric Index"),
    ("Choice: Yes\nIndex: n\nReason: BlahBlah", "without a numeric Index"),  # the template echoed
    ("Choice: Yes\nIndex: 5\nReason: out of range", "outside 1..4"),
    ("Choice: Yes\nIndex: 0\nReason: zero", "outside 1..4"),
    ("", "empty"),
    ("   \n\t", "empty"),
    (None, "empty"),
    ("I think the conversation is between two people.", "no 'Choice"),
    ("Choice: Maybe\nIndex: 2", "no 'Choice"),
    ("Index: 2\nReason: only an index", "no 'Choice"),
    ("A: No, no, no, no, no", "no 'Choice"),  # the judge went on with the dialogue
    ("No, no, no, I think", "no 'Choice"),   # a sentence, not an answer
    ("Yes", "without a numeric Index"),
])
def test_parse_verdict_unparseable(text, fragment):
    verdict = parse_verdict(text, n_utterances=4)
    assert not verdict.parsed
    assert fragment in verdict.error
    assert passes_at(verdict, 4) is None


def test_index_is_checked_against_the_judged_length():
    text = "Choice: Yes\nIndex: 7\nReason: x"
    assert parse_verdict(text, n_utterances=8).parsed
    assert not parse_verdict(text, n_utterances=6).parsed


def test_passes_at():
    no = parse_verdict("Choice: No\nIndex: None\nReason: ok", n_utterances=8)
    yes5 = parse_verdict("Choice: Yes\nIndex: 5\nReason: ok", n_utterances=8)
    for n in range(3, 9):
        assert passes_at(no, n) is True
    assert passes_at(yes5, 3) is True
    assert passes_at(yes5, 4) is True
    assert passes_at(yes5, 5) is False
    assert passes_at(yes5, 8) is False
    assert passes_at(Verdict(parsed=False, error="x"), 4) is None


def test_protocol_version_is_stable(examples):
    assert protocol_version(examples) == protocol_version(copy.deepcopy(examples))
    assert protocol_version(examples) == protocol_version(load_examples(EXAMPLES))


@pytest.mark.parametrize("field", ["conv", "choice", "index", "reason"])
def test_protocol_version_changes_when_an_example_changes(examples, field):
    changed = copy.deepcopy(examples)
    value = changed[2][field]
    changed[2][field] = value + 1 if isinstance(value, int) else value + " "
    assert protocol_version(changed) != protocol_version(examples)


def test_protocol_version_changes_with_examples_order_or_count(examples):
    assert protocol_version(examples[::-1]) != protocol_version(examples)
    assert protocol_version(examples[:3]) != protocol_version(examples)


def test_protocol_version_changes_with_the_prompt(examples, monkeypatch):
    import dialogbench.botchat.unieval as unieval

    before = protocol_version(examples)
    monkeypatch.setattr(unieval, "UNIEVAL_PROMPT", UNIEVAL_PROMPT + " ")
    assert unieval.protocol_version(examples) != before
    monkeypatch.setattr(unieval, "UNIEVAL_PROMPT", UNIEVAL_PROMPT)
    monkeypatch.setattr(unieval, "PARSER_VERSION", "unieval-parser-v999")
    assert unieval.protocol_version(examples) != before


@pytest.mark.parametrize("text, choice, index", [
    ("No", "No", None),          # what SmolLM2-135M answers: the choice alone
    ("No.", "No", None),
    ("**Yes**\nIndex: 3", "Yes", 3),
])
def test_parse_verdict_bare_first_line_answer(text, choice, index):
    verdict = parse_verdict(text, n_utterances=4)
    assert verdict.parsed and (verdict.choice, verdict.index) == (choice, index)


@pytest.mark.parametrize("index, error", [
    ("99999999999999999999999", "Index 99999999999999999999999 is outside 1..8"),  # past int32 (the ai_index column)
    ("9" * 5000, "Index 9999999999999999… (5000 characters) is too long to be a number in 1..8"),
    ("-1", "Index -1 is outside 1..8"),  # was read as 1
    ("0", "Index 0 is outside 1..8"),
    ("9", "Index 9 is outside 1..8"),
    ("1e3", "Index 1e3 is outside 1..8"),  # was read as 1
    ("1e999", "Index 1e999 is outside 1..8"),
    ("3.5", "non-integer Index 3.5 (rejected, not rounded)"),  # was read as 3
    ("nan", "Index nan is not a finite number"),
    ("inf", "Index inf is not a finite number"),
    ("3,4", "Index 3,4 is not a number in 1..8"),
])
def test_an_index_out_of_the_dialogue_is_unparsed_and_not_kept(index, error):
    verdict = parse_verdict(f"Choice: Yes\nIndex: {index}\nReason: x", n_utterances=8)
    assert (verdict.parsed, verdict.choice, verdict.index, verdict.error) == (False, "Yes", None, error)


@pytest.mark.parametrize("text, index", [
    ("Choice: Yes\nIndex: 3.\nReason: x", 3),
    ("Choice: Yes\nIndex: 3.0\nReason: x", 3),
    ("Choice: Yes\nIndex - 3\nReason: x", 3),
    ("Choice: Yes\nIndex: +8\nReason: x", 8),
])
def test_an_index_written_as_a_whole_number_in_range_is_read(text, index):
    verdict = parse_verdict(text, n_utterances=8)
    assert verdict.parsed and verdict.index == index
