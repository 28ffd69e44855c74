import pytest

from dialogbench.gameeval.askguess import AskGuess, word_pattern
from tests.gameeval.helpers import drive, setup

MODEL = {"questioner": "m", "answerer": "m"}


def game(word="apple", setting="without_description", **limits):
    return AskGuess(setup("askguess", item=word, setting=setting, assignment=MODEL), **limits)


def scripted(questions, answers):
    q, a = iter(questions), iter(answers)
    return lambda move: next(q) if move.player == "questioner" else next(a)


def test_correct_guess_then_gameover_is_a_successful_trial_with_its_round_count():
    g = game()
    drive(g, scripted(["Is it alive?", "Is it a fruit?", "Is it a kind of apple?"],
                      ["No, but it grows on trees.", "Yes.", "Gameover!"]))
    assert (g.outcome, g.end_reason, g.rounds if hasattr(g, "rounds") else g.round) == ("ST", "gameover_correct", 3)
    assert g.finished


def test_gameover_without_the_word_guessed_is_an_ending_error():
    g = game()
    drive(g, scripted(["Is it alive?"], ["game over"]))
    assert (g.outcome, g.end_reason, g.round) == ("EE", "gameover_wrong", 1)


def test_answer_mentioning_the_word_ends_the_game():
    g = game("aquarium_fish")
    drive(g, scripted(["What is it?"], ["It is one of the Aquarium fishes."]))
    assert (g.outcome, g.end_reason) == ("AME", "answer_mentioned")


def test_description_mentioning_the_word_is_an_answer_mentioned_error():
    g = game(setting="with_description")
    drive(g, lambda move: "An apple a day keeps the doctor away.")
    assert g.outcome == "AME" and g.round == 0


def test_round_limit_error_after_max_rounds():
    g = game(max_rounds=3)
    steps = drive(g, lambda move: "Is it big?" if move.player == "questioner" else "No.")
    assert (g.outcome, g.end_reason, g.round, len(steps)) == ("RLE", "round_limit", 3, 6)


def test_empty_reply_is_a_chat_error():
    g = game()
    drive(g, scripted(["Is it red?"], ["   "]))
    assert (g.outcome, g.end_reason, g.chat_errors) == ("CE", "empty_reply", 1)


def test_backend_errors_are_retried_then_end_the_game_unfinished():
    g = game(max_retries=2)
    steps = drive(g, lambda move: None)
    assert len(steps) == 3  # the first ask and two re-asks
    assert (g.outcome, g.end_reason, g.finished, g.chat_errors) == ("CE", "backend_error", False, 3)
    assert [e for e, in [(x[1],) for x in g.backend_errors]] == ["boom"] * 3


def test_a_transient_backend_error_is_asked_again_with_a_new_seed():
    g = game()
    calls = []

    def flaky(move):
        calls.append(move.seed)
        if len(calls) == 1:
            return None
        return "Is it an apple?" if move.player == "questioner" else "gameover"
    drive(g, flaky)
    assert g.outcome == "ST" and g.chat_errors == 1 and calls[0] != calls[1]


def test_private_histories_and_the_setting():
    g = game(setting="with_description")
    first = g.pending()
    assert [m.player for m in first] == ["answerer"]
    assert "'apple'" in first[0].messages[0]["content"]          # the answerer knows the word
    drive(g, scripted(["Is it a kind of apple?"], ["A round fruit.", "gameover"]))
    questioner = g.players["questioner"]
    assert "apple" not in questioner.rules                        # the questioner does not
    assert {"role": "user", "content": "answerer: A round fruit."} in questioner.history
    assert [e["kind"] for e in g.transcript] == ["announce", "describe", "ask", "answer"]


@pytest.mark.parametrize("text,hit", [("an apple", True), ("apples!", True), ("pineapple", False),
                                      ("snapple", False), ("APPLE", True)])
def test_word_matching_is_whole_word(text, hit):
    assert bool(word_pattern("apple").search(text)) is hit


def test_prompts_alternate_roles_mid_game():
    g = game()
    seen = []

    def respond(move):
        seen.append([m["role"] for m in move.messages])
        return "Is it red?" if move.player == "questioner" else "No."
    drive(g, respond)
    assert len(seen) == 60
    for roles in seen:
        assert roles[0] == "user" and roles[-1] == "user"
        assert all(a != b for a, b in zip(roles, roles[1:]))
