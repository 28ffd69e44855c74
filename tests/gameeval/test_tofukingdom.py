import json

import pytest

from dialogbench.gameeval.tofukingdom import CAMP_OF, QUESTIONS, TofuKingdom, read_question, unread
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
    assert all(q["error"] == "question 7 is not one of the three (number 7 names none of 1, 2, 3): asked question 1 "
                             "(Who is the Princess?) in its place" for q in questions)
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
    ("3. What is the identity of player5 ?", "", (3, "player5")),
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
        assert q["error"] == ("question 'Is player3 the Princess?' is not one of the three (a yes-or-no question): "
                              "asked question 1 (Who is the Princess?) in its place")
    # a reply that is not JSON at all: its text is read the same way, and the fallback said the same way
    g = game()
    drive(g, lambda m: "I would like to know everything." if m.kind == "question" else honest(g)(m))
    first = next(e for e in g.transcript if e["kind"] == "question")
    assert first["error"] == ("no JSON object in the reply; question 'I would like to know everything.' is not one "
                              "of the three (no wording of the three): asked question 1 (Who is the Princess?) in its "
                              "place")


@pytest.mark.parametrize("value", [1.5, "1.5", -1, "-1", 0, 99999999999999999999999, "99999999999999999999999",
                                   float("inf"), float("nan"), "1e999", "1st"])
def test_a_question_number_out_of_bounds_names_no_question(value):
    assert read_question(value, "") == (None, None)  # 1.5 and -1 were read as question 1


@pytest.mark.parametrize("value, number", [(2.0, 2), ("3.", 3), ("question 2", 2), ("+1", 1)])
def test_a_whole_question_number_is_read(value, number):
    assert read_question(value, "") == (number, None)


# The forms the fallback reads: numbered ones (the number wins; question 3 takes its player from the text after it)
# and the common paraphrases of the three. Each with what it reads as.
NUMBERED = [
    ("3. What is the identity of player5 ?", (3, "player5")),   # read as question 2 (no player) until tofukingdom-v3
    ("3) What is the identity of player5?", (3, "player5")), ("(3) player4", (3, "player4")),
    ("3: player6", (3, "player6")), ("Question 3: what is the identity of player2?", (3, "player2")),
    ("Question 3 - player2's identity", (3, "player2")), ("Q3 player7", (3, "player7")),
    ("#3 about player1", (3, "player1")), ("No. 3, the identity of player4", (3, "player4")),
    ("1.", (1, None)), ("1. Which player is the Princess?", (1, None)), ("1) Who is the Princess?", (1, None)),
    ("Question 1", (1, None)), ("question 2", (2, None)), ("Q2", (2, None)), ("#2", (2, None)),
    ("2. What is your identity?", (2, None)), ("**2.** What is your identity?", (2, None)),
    ("question two", (2, None)), ("Question three: player3", (3, "player3")),
    ("I will ask question 3 about player6", (3, "player6")), ("the second question", (2, None)),
    ("3", (3, None)),  # its player from the reply's name
]
PARAPHRASES = [
    ("Who do you think is the Princess?", 1), ("Who do you believe is the real Princess?", 1),
    ("Which one of you is the true princess?", 1), ("Who among you is the Princess?", 1),
    ("Can you tell me who the Princess is?", 1), ("Who's the Princess?", 1), ("Who\u2019s the Princess?", 1),
    ("Which player do you think is the Princess?", 1), ("Identify the Princess.", 1),
    ("What's your role?", 2), ("What role do you play?", 2), ("Who are you?", 2), ("Tell me your true identity.", 2),
    ("What is your identity, player4?", 2),  # the authors' Prince named the player asked (their logs)
    ("What is Player 5's identity?", 3), ("What role does player3 have?", 3), ("Who is player2?", 3),
    ("What is player6?", 3), ("What is the role of player1?", 3),
]


@pytest.mark.parametrize("text, read", NUMBERED)
def test_numbered_questions_are_read_by_their_number(text, read):
    assert read_question(text, "") == read
    assert read_question(None, text) == read  # a reply that is not JSON: its text, read the same way


@pytest.mark.parametrize("text, number", PARAPHRASES)
def test_common_paraphrases_are_read_as_the_question_they_name(text, number):
    assert read_question(text, "")[0] == number


@pytest.mark.parametrize("text, why", [
    ("Who is the Queen?", "it asks who the Queen is"), ("Which one is the Minister?", "it asks who the Minister is"),
    ("Which player is the Maid?", "it asks who the Maid is"),  # asked by the authors' Prince (their logs)
    ("Who do you think is the Spy?", "it asks who the Spy is"), ("Is player3 the Princess?", "a yes-or-no question"),
    ("Are you the Princess?", "a yes-or-no question"), ("Tell me a secret.", "no wording of the three"),
    ("question 4", "number 4 names none of 1, 2, 3"), ("7", "number 7 names none of 1, 2, 3"),
    ("1.5", "number 1.5 names none of 1, 2, 3"), ("", "no question")])
def test_what_the_fallback_cannot_read_it_says(text, why):
    assert read_question(text, "") == (None, None)
    assert unread(text) == why


def ask_each(g, question):
    """A game whose Prince asks every seated player ``question`` (a JSON question value), honest otherwise."""
    return lambda m: json.dumps({"thought": "t", "question": question}) if m.kind == "question" else honest(g)(m)


def test_a_numbered_question_three_asks_about_the_player_its_text_names():
    """"3. What is the identity of player5 ?" with no name field: question 3 about player5, no chat error (it became
    question 2, a chat error, until tofukingdom-v3: the number was read before the player)."""
    g = game()
    drive(g, ask_each(g, "3. What is the identity of player5 ?"))
    questions = [e for e in g.transcript if e["kind"] == "question"]
    assert [q["text"] for q in questions[:4]] == [f"player{i}, What is the identity of player5?" for i in range(1, 5)]
    assert all(q["valid"] and q["target"] == "player5" for q in questions[:4])
    # player5 asked about itself: question 3 about the asked player is still question 2, said so
    assert questions[4]["text"] == "player5, What is your identity?"
    assert questions[4]["error"] == "question 3 about 'player5', not another seated player: asked question 2"
    assert g.chat_errors == 1


@pytest.mark.parametrize("question, asked", [("Who do you think is the Princess?", "Who is the Princess?"),
                                             ("Question 2", "What is your identity?"),
                                             ("What role does player7 have?", "What is the identity of player7?")])
def test_a_paraphrased_question_is_asked_as_the_question_it_names_no_chat_error(question, asked):
    g = game()
    drive(g, ask_each(g, question))
    first = next(e for e in g.transcript if e["kind"] == "question")
    assert first["text"] == f"player1, {asked}" and first["valid"] and first["error"] is None


def test_a_question_about_another_role_is_a_chat_error_that_says_what_it_could_not_read():
    g = game()
    drive(g, ask_each(g, "Who is the Queen?"))
    first = next(e for e in g.transcript if e["kind"] == "question")
    assert first["text"] == "player1, Who is the Princess?" and not first["valid"]
    assert first["error"] == ("question 'Who is the Queen?' is not one of the three (it asks who the Queen is): asked "
                              "question 1 (Who is the Princess?) in its place")


def test_a_json_question_without_its_question_is_not_read_from_its_thought():
    """The thought names a question and a player; neither is the question asked."""
    g = game()
    reply = json.dumps({"thought": "Who is player4? I ask question 3 about player6.", "name": "player2"})
    drive(g, lambda m: reply if m.kind == "question" else honest(g)(m))
    first = next(e for e in g.transcript if e["kind"] == "question")
    assert first["text"] == "player1, Who is the Princess?" and not first["valid"]
    assert first["error"] == ("JSON object without 'question'; no question to read: asked question 1 (Who is the "
                              "Princess?) in its place")
    assert first["thought"] == "Who is player4? I ask question 3 about player6."


def test_the_authors_logged_question_forms_read_as_they_meant():
    """The forms their Prince used in their four logged TofuKingdom games (jordddan/GameEval at 70244bf,
    tofukingdom/logs), with our seats for their names: each of the three as meant, and their one question about
    another role ("Which player is the Maid?") as none of the three."""
    assert read_question("Which player is the Princess?", "") == (1, None)
    assert read_question("What is your identity?", "") == (2, None)
    assert read_question("What is your identity, player2?", "") == (2, None)
    assert read_question("What is the identity of player6?", "") == (3, "player6")
    assert read_question("Which player is the Maid?", "") == (None, None)
