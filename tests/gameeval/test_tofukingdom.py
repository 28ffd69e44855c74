import json

import pytest

from dialogbench.gameeval.tofukingdom import CAMP_OF, TofuKingdom, question_number
from tests.gameeval.helpers import drive, setup

CAMPS = {"prince": "p", "queen": "q", "spy": "s"}


def game(seed=5):
    return TofuKingdom(setup("tofukingdom", seed=seed, assignment=CAMPS))


def seat_of(g, role):
    return next(n for n, r in g.identity.items() if r == role)


def honest(g, choose_role="Princess"):
    def respond(move):
        if move.kind == "question":
            return json.dumps({"thought": "t", "question": 2})
        if move.kind == "extra":
            return json.dumps({"thought": "t", "ask": "player3", "question": 3, "name": "player1"})
        if move.kind == "answer":
            return json.dumps({"thought": "t", "speak": f"I am the {g.identity[move.player]}"})
        return json.dumps({"thought": "t", "name": seat_of(g, choose_role)})
    return respond


def test_roles_camps_and_models():
    g = game()
    assert sorted(g.identity.values()) == sorted(["Princess", "Queen", "Minister", "Chef", "Guard", "Maid", "Spy"])
    for name, role in g.identity.items():
        assert g.players[name].model == CAMPS[CAMP_OF[role]]
        assert f"your identity is {role}" in g.players[name].rules
    assert g.players["prince"].model == "p" and "identity is" not in g.players["prince"].rules


@pytest.mark.parametrize("role,camp,reason", [("Princess", "prince", "princess_chosen"),
                                              ("Queen", "queen", "queen_chosen"),
                                              ("Maid", "spy", "other_chosen"), ("Chef", "spy", "other_chosen")])
def test_the_final_choice_decides_the_winning_camp(role, camp, reason):
    g = game()
    steps = drive(g, honest(g, role))
    assert (g.outcome, g.end_reason, g.finished, g.round) == (camp, reason, True, 8)
    kinds = [s[0].kind for s in steps]
    assert kinds == ["question", "answer"] * 7 + ["extra", "answer", "choose"]
    assert [s[0].player for s in steps if s[0].kind == "answer"] == [f"player{i}" for i in range(1, 8)] + ["player3"]
    assert g.chat_errors == 0


def test_question_three_and_the_extra_question_are_public():
    g = game()
    drive(g, honest(g))
    extra = [e for e in g.transcript if e["kind"] == "extra"][0]
    assert extra["text"] == "player3, What is the identity of player1?" and extra["target"] == "player1"
    assert {"role": "user", "content": "prince: player3, What is the identity of player1?"} in g.players["player5"].history


def test_rule_breaking_questions_fall_back_and_are_counted():
    g = game()

    def respond(move):
        if move.kind == "question":
            return json.dumps({"thought": "t", "question": 7})    # not on the list → question 1
        if move.kind == "extra":
            return "Let me ask player6: what is your identity?"  # prose → player6, question 2
        if move.kind == "answer":
            return "no json"
        return "I pick player2."
    drive(g, respond)
    questions = [e for e in g.transcript if e["kind"] == "question"]
    assert all(q["text"].endswith("Who is the Princess?") and not q["valid"] for q in questions)
    extra = [e for e in g.transcript if e["kind"] == "extra"][0]
    assert extra["text"] == "player6, What is your identity?"
    assert g.finished and g.chat_errors == 7 + 1 + 8 + 1


def test_question_three_about_the_asked_player_becomes_question_two():
    g = game()
    drive(g, lambda m: json.dumps({"thought": "t", "question": 3, "name": "player1"}) if m.kind == "question"
          else honest(g)(m))
    first = [e for e in g.transcript if e["kind"] == "question"][0]
    assert first["text"] == "player1, What is your identity?" and not first["valid"]


def test_no_choice_ends_the_game_unfinished():
    g = game()
    drive(g, lambda m: "I cannot decide" if m.kind == "choose" else honest(g)(m))
    assert (g.outcome, g.end_reason, g.finished) == (None, "no_choice", False)


def test_seating_is_drawn_from_the_seed():
    assert game(seed=1).identity == game(seed=1).identity
    assert len({tuple(game(seed=s).identity.values()) for s in range(10)}) > 1


@pytest.mark.parametrize("value,raw,number", [(1, "", 1), ("2", "", 2), ("3. What is the identity of X", "", 3),
                                              ("What is your identity?", "", 2), (None, "who is the princess", 1),
                                              (9, "", None)])
def test_question_number(value, raw, number):
    assert question_number(value, raw) == number
