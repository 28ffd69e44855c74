"""BotChat Arena / GTEval prompts, verdict parsing and the winner mapping (no lake, no backend)."""

from __future__ import annotations

import pytest

from dialogbench.botchat import arena
from dialogbench.botchat.arena import (ANSWER_REQUEST, ARENA_PROMPT, GT_PROMPT, build_prompt, parse_arena_verdict,
                                       protocol_version, render_pair, winner_for)


def test_arena_prompt_is_the_readme_text():
    assert ARENA_PROMPT.startswith("\nYou are an AI assistant who helps human do the Turing test more easily. \n")
    assert "there can be AI-generated utterance in each conversation" in ARENA_PROMPT
    for option in ("Conversation 1", "Conversation 2", "Both", "Neither"):
        assert f"include `Choice: {option}` in your response" in ARENA_PROMPT
        assert f"Choice: {option}\nReason: BlahBlah\n" in ARENA_PROMPT


def test_gt_prompt_states_exactly_one_conversation_is_ai():
    assert "there can be AI-generated utterance" not in GT_PROMPT
    assert "exactly one of them contains AI-generated utterances" in GT_PROMPT
    # otherwise the same prompt: same options (so ties still exist), same format
    assert GT_PROMPT.split("AI involved. \n", 1)[1] == ARENA_PROMPT.split("AI involved. \n", 1)[1]


def test_render_pair_heads_each_conversation():
    text = render_pair(["hi", "hello", "how are you"], ["yo", "sup"])
    assert text == ("Conversation 1:\nA: hi<chat_end>\n\nB: hello<chat_end>\n\nA: how are you<chat_end>\n\n"
                    "Conversation 2:\nA: yo<chat_end>\n\nB: sup<chat_end>\n")


@pytest.mark.parametrize("kind, prompt", [("arena", ARENA_PROMPT), ("gteval", GT_PROMPT)])
def test_build_prompt_is_one_user_message_ending_with_the_answer_request(kind, prompt):
    [message] = build_prompt(["a1", "b1"], ["a2", "b2"], kind=kind)
    assert message["role"] == "user"
    content = message["content"]
    assert content.startswith(prompt.strip())
    assert content.endswith(ANSWER_REQUEST)
    assert content.index("Conversation 1:\nA: a1<chat_end>") < content.index("Conversation 2:\nA: a2<chat_end>")
    assert content.count("<chat_end>") == 4


def test_protocol_versions_differ_by_kind_and_are_stable():
    assert protocol_version("arena") != protocol_version("gteval")
    assert protocol_version("arena") == protocol_version("arena")


@pytest.mark.parametrize("text, verdict", [
    ("Choice: Conversation 1\nReason: the second chat is far too long.", "conversation_1"),
    ("Choice: Conversation 2\nReason: BlahBlah", "conversation_2"),
    ('"Choice: Conversation 1; Reason: it repeats itself"', "conversation_1"),  # the paper's format
    ("Choice: Both; Reason: both sound like assistants.", "both"),
    ("Choice: Neither\nReason: natural.", "neither"),
    ("**Choice:** Conversation 2\n**Reason:** formal tone.", "conversation_2"),
    ("**Choice: Conversation 2**", "conversation_2"),
    ("Choice: `Conversation 1`", "conversation_1"),
    ("choice: conversation2", "conversation_2"),
    ("CHOICE: BOTH", "both"),
    ("Choice: 1\nReason: x", "conversation_1"),
    ("Choice: 2", "conversation_2"),
    ("Choice: None", "neither"),
    ("Choice - Conversation 1", "conversation_1"),
    ("After reading both carefully:\n\nChoice: Conversation 2\nReason: B's last chat is an essay.", "conversation_2"),
    ("Choice: Conversation 2, because Conversation 1 reads naturally.", "conversation_2"),
    ("Choice: Both (Conversation 1 and Conversation 2)", "both"),
    ("Answer: Conversation 1", "conversation_1"),
    ("Conversation 2\nReason: too polite.", "conversation_2"),  # a bare first line
    ("**Both**", "both"),
    ("Neither.", "neither"),
])
def test_parses_realistic_outputs(text, verdict):
    parsed = parse_arena_verdict(text)
    assert parsed.parsed and parsed.verdict == verdict and parsed.error is None


@pytest.mark.parametrize("text", [
    None, "", "   \n ",
    "I am not sure what you are asking me to do here.",
    "A: Sure, I went there last weekend!<chat_end>",  # the judge continued the dialogue
    "Choice: Conversation 3",
    "Choice: Conversation 1 or Conversation 2",
    "Choice: Conversation 1 or 2",
    'Choice: Conversation 1", "Choice: Conversation 2", "Choice: Both", "Choice: Neither"',  # an echo of the request
    "Both conversations seem fine to me, hard to say.",  # prose, not a choice
    "Conversation 2 is the AI one.",  # prose, not a bare option
    "Choice: Yes",
])
def test_unparseable_outputs_are_never_guessed(text):
    parsed = parse_arena_verdict(text)
    assert not parsed.parsed and parsed.verdict is None and parsed.error
    assert winner_for(parsed.verdict) is None


def test_reason_is_kept():
    assert parse_arena_verdict("Choice: Conversation 1; Reason: too long.").reason == "too long."
    assert parse_arena_verdict("**Choice:** Both\n**Reason:** formal.").reason == "formal."
    assert parse_arena_verdict("Choice: Neither").reason is None


@pytest.mark.parametrize("verdict, winner", [
    ("conversation_1", "model_b"),  # the first conversation is AI: the one shown second wins
    ("conversation_2", "model_a"),
    ("both", "tie"),
    ("neither", "tie"),
    (None, None),
])
def test_winner_mapping(verdict, winner):
    assert winner_for(verdict) == winner


def test_every_verdict_has_a_winner():
    assert {winner_for(v) for v in arena.VERDICTS} == {"model_a", "model_b", "tie"}


@pytest.mark.parametrize("text, error", [
    ("Choice: 99999999999999999999999", "Choice: conversation 99999999999999999999999 is outside 1..2"),
    ("Choice: Conversation 99999999999999999999999", "is outside 1..2"),
    ("Choice: -1", "Choice: conversation -1 is outside 1..2"),  # was conversation_1
    ("Choice: 1.5", "non-integer Choice: conversation 1.5"),  # was conversation_1
    ("Choice: Conversation 1.5\nReason: x", "non-integer Choice: conversation 1.5"),  # was conversation_1
    ("Choice: Conversation 1e30", "Choice: conversation 1e30 is outside 1..2"),
    ("Choice: 0", "Choice: conversation 0 is outside 1..2"),
    ("Choice: Conversation 3", "Choice: conversation 3 is outside 1..2"),
    ("Choice: Conversation 1 or 3", "Choice: conversation 3 is outside 1..2"),
    ("Choice: nan", "Choice: conversation nan is not a finite number"),
])
def test_a_conversation_number_out_of_bounds_is_unparsed_with_its_reason(text, error):
    parsed = parse_arena_verdict(text)
    assert not parsed.parsed and parsed.verdict is None and error in parsed.error


@pytest.mark.parametrize("text, verdict", [
    ("Choice: 2.0", "conversation_2"),
    ("Choice: Conversation 2.", "conversation_2"),
    ("Choice: Conversation 2, because conversation 1 has 3 turns and 5 questions.", "conversation_2"),
])
def test_a_whole_conversation_number_is_read(text, verdict):
    assert parse_arena_verdict(text).verdict == verdict
