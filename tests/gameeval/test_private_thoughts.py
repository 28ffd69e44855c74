"""A private thought never reaches another player: of a JSON reply the others hear its ``speak`` and nothing else.

A blank ``speak`` ("" or spaces, which a move's schema allows, or null) is heard as the empty value, as the GameEval
authors' players hear it (``game_spyfall.py`` L127-131 and ``game_tofukingdom.py`` L109 pass it on as it came), and
flagged; a JSON reply without ``speak`` (a reply cut off in its thought, say) is heard as nothing. Each game here is
played to its end with one player's move carrying a thought that no other player may ever see in a prompt."""

from __future__ import annotations

import json

import pytest

from dialogbench.gameeval.spyfall import SpyFall
from dialogbench.gameeval.tofukingdom import TofuKingdom
from tests.gameeval.helpers import drive, setup

SECRET = "I am the Princess, so I must lie"  # the thought the others must never hear

# (reply with the secret thought, chat error?, flagged blank?)
SPYFALL_BLANKS = {
    "empty": (json.dumps({"thought": SECRET, "speak": ""}), False, True),
    "spaces": (json.dumps({"thought": SECRET, "speak": "   "}), False, True),
    "whitespace": (json.dumps({"thought": SECRET, "speak": "\n\t "}), False, True),
    "null": (json.dumps({"thought": SECRET, "speak": None}), False, True),
    "empty list": (json.dumps({"thought": SECRET, "speak": []}), False, True),
    "no speak": (json.dumps({"thought": SECRET}), True, False),
    "cut off in the thought": ('{"thought": "' + SECRET + ' and then', True, False),
    "fenced, no speak": ("```json\n" + json.dumps({"thought": SECRET, "name": "player1"}) + "\n```", True, False),
}


def prompts_of(steps, *, but: str) -> list[str]:
    """Every message of every prompt sent to a player other than ``but``."""
    return [m["content"] for moves in steps for move in moves if move.player != but for m in move.messages]


def own_prompts(steps, player: str) -> list[str]:
    return [m["content"] for moves in steps for move in moves if move.player == player for m in move.messages]


@pytest.mark.parametrize("case", list(SPYFALL_BLANKS))
def test_spyfall_a_blank_description_is_heard_as_the_empty_value_never_its_thought(case):
    reply, counted, flagged = SPYFALL_BLANKS[case]
    g = SpyFall(setup("spyfall", item="BMW,BENZ", seed=3, assignment={"spy": "a", "villager": "b"}), max_rounds=2)
    first = g.order[0]

    def respond(move):
        if move.kind == "describe":
            return reply if move.player == first else json.dumps({"thought": "t", "speak": f"said by {move.player}"})
        return json.dumps({"thought": "t", "speak": "s", "name": next(n for n in g.living if n != move.player)})
    steps = drive(g, respond)
    assert not any(SECRET in text for text in prompts_of(steps, but=first))
    assert any(SECRET in text for text in own_prompts(steps, first))  # its own history keeps it (it was said)
    entries = [(e, f) for e, f in zip(g.transcript, g.move_flags) if e["speaker"] == first and e["kind"] == "describe"]
    assert entries
    for entry, flags in entries:
        assert entry["text"] == "" and entry["valid"] is not counted
        assert (flags == "blank speak") is flagged
    # the others heard the empty value: "player3: " and nothing after it
    second = g.order[1]
    assert {"role": "user", "content": f"{first}: "} in g.players[second].history
    assert g.chat_errors == (len(entries) if counted else 0)
    assert g.ended and g.end_reason != "backend_error"


def test_spyfall_a_vote_with_a_blank_speak_is_heard_as_the_vote_alone_and_flagged():
    g = SpyFall(setup("spyfall", item="BMW,BENZ", seed=3, assignment={"spy": "a", "villager": "b"}), max_rounds=1)
    first = g.order[0]

    def respond(move):
        if move.kind == "describe":
            return json.dumps({"thought": "t", "speak": "a car"})
        target = next(n for n in g.living if n != move.player)
        if move.player == first:
            return json.dumps({"thought": SECRET, "speak": "  ", "name": target})
        return json.dumps({"thought": "t", "speak": "s", "name": target})
    steps = drive(g, respond)
    assert not any(SECRET in text for text in prompts_of(steps, but=first))
    (vote, flags), = [(e, f) for e, f in zip(g.transcript, g.move_flags)
                      if e["speaker"] == first and e["kind"] == "vote"]
    assert vote["valid"] and vote["text"] is None and flags == "blank speak" and g.chat_errors == 0
    heard = [m["content"] for m in g.players[g.order[1]].history if m["content"].startswith(f"{first}: I vote for")]
    assert heard == [f"{first}: I vote for {vote['target']}."]


TOFU_BLANKS = {
    "empty": (json.dumps({"thought": SECRET, "speak": ""}), False, True),
    "spaces": (json.dumps({"thought": SECRET, "speak": " "}), False, True),
    "null": (json.dumps({"thought": SECRET, "speak": None}), True, True),  # the authors' host: an error game
    "no speak": (json.dumps({"thought": SECRET}), True, False),
    "cut off in the thought": ('{"thought": "' + SECRET + ', I will say', True, False),
}


@pytest.mark.parametrize("case", list(TOFU_BLANKS))
def test_tofukingdom_a_blank_answer_is_heard_as_the_empty_value_never_its_thought(case):
    reply, counted, flagged = TOFU_BLANKS[case]
    g = TofuKingdom(setup("tofukingdom", seed=5, assignment={"prince": "p", "queen": "q", "spy": "s"}))
    queen = next(n for n, r in g.identity.items() if r == "Queen")

    def respond(move):
        if move.kind == "question":
            return json.dumps({"thought": "t", "question": 2})
        if move.kind == "extra":
            return json.dumps({"thought": "t", "ask": queen, "question": 2})
        if move.kind == "answer":
            return reply if move.player == queen else json.dumps({"thought": "t", "speak": "I am the Chef"})
        return json.dumps({"thought": "t", "name": queen})
    steps = drive(g, respond)
    assert not any(SECRET in text for text in prompts_of(steps, but=queen))  # the Prince's prompts among them
    assert any(SECRET in text for text in own_prompts(steps, queen))
    answers = [(e, f) for e, f in zip(g.transcript, g.move_flags) if e["speaker"] == queen and e["kind"] == "answer"]
    assert len(answers) == 2  # its question and the extra one
    for entry, flags in answers:
        assert entry["text"] == "" and entry["valid"] is not counted
        assert (flags == "blank speak") is flagged
    assert {"role": "user", "content": f"{queen}: "} in g.players["prince"].history
    assert g.chat_errors == (2 if counted else 0) and g.finished


def test_a_reply_with_no_json_at_all_is_still_heard_as_its_text():
    """Prose has no fields to tell a thought from speech: it is what the player said (a chat error)."""
    g = SpyFall(setup("spyfall", item="BMW,BENZ", seed=3, assignment={"spy": "a", "villager": "b"}), max_rounds=1)
    first = g.order[0]
    drive(g, lambda m: ("It has four wheels." if m.player == first else json.dumps({"thought": "t", "speak": "car"}))
          if m.kind == "describe" else json.dumps({"thought": "t", "speak": "s", "name": first}))
    assert {"role": "user", "content": f"{first}: It has four wheels."} in g.players[g.order[1]].history
