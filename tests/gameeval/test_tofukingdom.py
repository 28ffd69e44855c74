import json

import pytest

from dialogbench.gameeval.tofukingdom import CAMP_OF, QUESTIONS, TofuKingdom, read_question
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
    assert all(q["error"] == "question 7 is not one of the three: asked question 1 (Who is the Princess?) in its place"
               for q in questions)
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


@pytest.mark.parametrize("value,raw,read", [
    (1, "", (1, None)), ("2", "", (2, None)), ("3. What is the identity of X", "", (3, None)),
    ("What is your identity?", "", (2, None)), (None, "who is the princess", (1, None)), (9, "", (None, None)),
    # the authors' wording (tofukingdom/utils/prompt.py) and close paraphrases
    ("Which player is the Princess?", "", (1, None)), ("1.Which player is the Princess?", "", (1, None)),
    ("Which one of you is the princess?", "", (1, None)), ("Which of you is the Princess?", "", (1, None)),
    ("Who's the Princess?", "", (1, None)), ("What's your role?", "", (2, None)), ("Who are you?", "", (2, None)),
    ("What is the identity of player4 ?", "", (3, "player4")), ("What is Player 5's identity?", "", (3, "player5")),
    ("Who is player3?", "", (3, "player3")), ("What is the identity of {player_name} ?", "", (3, None)),
    (None, "player1, what is the identity of player6? And who is the princess?", (3, "player6")),
    # off the list
    ("Is player3 the Princess?", "", (None, None)), ("Tell me a secret.", "", (None, None))])
def test_read_question(value, raw, read):
    assert read_question(value, raw) == read


def test_the_authors_wording_is_read_as_the_question_it_names_no_chat_error():
    """Their Prince asks in the words of their prompt; those read as the question they name (v1 read "Which player
    is the Princess?" as off the list: a chat error), and question 3 may name its player in its text."""
    g = game()
    third = "What is the identity of player7 ?"
    asked = iter(["Which player is the Princess?", "What is your identity?"] + [third] * 5)

    def respond(move):
        if move.kind == "question":
            return json.dumps({"thought": "t", "question": next(asked)})
        return honest(g)(move)
    drive(g, respond)
    questions = [e for e in g.transcript if e["kind"] == "question"]
    assert [q["text"] for q in questions] == ["player1, Who is the Princess?", "player2, What is your identity?"] + \
        [f"player{i}, What is the identity of player7?" for i in range(3, 7)] + ["player7, What is your identity?"]
    assert all(q["valid"] for q in questions[:6]) and questions[2]["target"] == "player7"
    # question 3 about the very player asked is still a chat error, and its fallback is said
    assert questions[6]["error"] == "question 3 about 'player7', not another seated player: asked question 2"


def test_an_off_list_question_is_a_chat_error_that_says_what_was_asked_instead():
    g = game()
    drive(g, lambda m: json.dumps({"thought": "t", "question": "Is player3 the Princess?"}) if m.kind == "question"
          else honest(g)(m))
    questions = [e for e in g.transcript if e["kind"] == "question"]
    assert len(questions) == 7 and g.chat_errors == 7
    for q in questions:
        assert not q["valid"] and q["text"].endswith(QUESTIONS[1])
        assert q["error"] == ("question 'Is player3 the Princess?' is not one of the three: asked question 1 "
                              "(Who is the Princess?) in its place")
    # a reply that is not JSON at all: its text is read the same way, and the fallback said the same way
    g = game()
    drive(g, lambda m: "I would like to know everything." if m.kind == "question" else honest(g)(m))
    first = next(e for e in g.transcript if e["kind"] == "question")
    assert first["error"] == ("no JSON object in the reply; question 'I would like to know everything.' is not one "
                              "of the three: asked question 1 (Who is the Princess?) in its place")


@pytest.mark.parametrize("value", [1.5, "1.5", -1, "-1", 0, 99999999999999999999999, "99999999999999999999999",
                                   float("inf"), float("nan"), "1e999", "1st"])
def test_a_question_number_out_of_bounds_names_no_question(value):
    assert read_question(value, "") == (None, None)  # 1.5 and -1 were read as question 1


@pytest.mark.parametrize("value, number", [(2.0, 2), ("3.", 3), ("question 2", 2), ("+1", 1)])
def test_a_whole_question_number_is_read(value, number):
    assert read_question(value, "") == (number, None)
