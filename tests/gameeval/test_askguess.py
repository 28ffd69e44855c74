import pytest

from dialogbench.gameeval.askguess import AskGuess, Matcher, authors_checkin, question_limit
from dialogbench.gameeval.words import word_pattern
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
    drive(g, scripted(["What is it?"], ["It is one of the Aquarium fish, kept at home."]))
    assert (g.outcome, g.end_reason) == ("AME", "answer_mentioned")


def test_authors_matcher_a_guess_containing_the_word_as_a_substring_is_correct():
    # game_askguess.py L99: word.lower() in question.lower(): "pineapple" guesses "apple"; whole words do not
    g = game()
    drive(g, scripted(["Is it a pineapple?"], ["gameover"]))
    assert (g.outcome, g.end_reason) == ("ST", "gameover_correct")
    g = game(matcher="whole_word")
    drive(g, scripted(["Is it a pineapple?"], ["gameover"]))
    assert (g.outcome, g.end_reason) == ("EE", "gameover_wrong")


def test_authors_matcher_a_mention_is_the_word_between_spaces():
    # checkin (L14-25): " apple " in the reply with punctuation made spaces; "Apples" is no mention for the
    # authors (the game goes on) and one for the whole-word matcher
    g = game()
    drive(g, scripted(["Is it a fruit?", "Is it an apple?"], ["Yes, like apples and pears.", "gameover"]))
    assert (g.outcome, g.round) == ("ST", 2)
    g = game(matcher="whole_word")
    drive(g, scripted(["Is it a fruit?"], ["Yes, like apples and pears."]))
    assert (g.outcome, g.end_reason) == ("AME", "answer_mentioned")
    g = game()
    drive(g, scripted(["Is it a fruit?"], ["Yes: an apple, probably."]))
    assert (g.outcome, g.end_reason) == ("AME", "answer_mentioned")


@pytest.mark.parametrize("text,hit", [("an apple.", True), ("an Apple, red", True), ("apple pie", False),
                                      ("it is an apple", False), ("apples are red", False), ("(apple)x", True),
                                      ("an apple\nyes", False)])
def test_authors_checkin_needs_a_space_each_side(text, hit):
    assert authors_checkin("apple", text) is hit


def test_authors_matcher_gameover_is_gameover_or_game_over():
    m = Matcher("apple")
    assert m.gameover("Gameover!") and m.gameover("GAME OVER") and not m.gameover("game-over")
    assert Matcher("apple", "whole_word").gameover("game-over")
    with pytest.raises(ValueError):
        Matcher("apple", "exact")


def test_description_mentioning_the_word_is_an_answer_mentioned_error():
    g = game(setting="with_description")
    drive(g, lambda move: "An apple a day keeps the doctor away.")
    assert g.outcome == "AME" and g.round == 0


def test_round_limit_error_after_max_rounds():
    # the authors' cnt counts the description (L61) and the game ends at cnt > 30 (L111): 30 questions with the
    # description, 31 without it
    g = game(max_rounds=3, setting="with_description")
    steps = drive(g, lambda move: "Is it big?" if move.player == "questioner" else "No.")
    assert (g.outcome, g.end_reason, g.round, len(steps)) == ("RLE", "round_limit", 3, 7)
    g = game(max_rounds=3)
    steps = drive(g, lambda move: "Is it big?" if move.player == "questioner" else "No.")
    assert (g.outcome, g.end_reason, g.round, len(steps)) == ("RLE", "round_limit", 4, 8)


def test_without_description_the_31st_question_can_still_succeed():
    g = game()
    drive(g, scripted(["Is it big?"] * 30 + ["Is it an apple?"], ["No."] * 30 + ["gameover"]))
    assert (g.outcome, g.round) == ("ST", 31)
    assert question_limit(30, "without_description") == 31 and question_limit(30, "with_description") == 30


def test_empty_reply_is_a_chat_error():
    g = game()
    drive(g, scripted(["Is it red?"], ["   "]))
    assert (g.outcome, g.end_reason, g.chat_errors) == ("CE", "empty_reply", 1)


def test_backend_errors_are_retried_then_end_the_game_unfinished():
    g = game(max_retries=2)
    steps = drive(g, lambda move: None)
    assert len(steps) == 3  # the first ask and two re-asks
    # a backend that never answers is no outcome and no chat error: the game is a failed cell, replayed next run
    assert (g.outcome, g.end_reason, g.finished, g.chat_errors) == (None, "backend_error", False, 0)
    assert [e["valid"] for e in g.transcript if e["speaker"] == "questioner"] == [False] * 3
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
    assert g.outcome == "ST" and g.chat_errors == 0 and calls[0] != calls[1]  # the backend's error, not the player's
    assert [e["error"] for e in g.transcript if not e["valid"]] == ["backend: boom"]


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
def test_whole_word_matcher_is_whole_word(text, hit):
    assert bool(word_pattern("apple").search(text)) is hit


def test_prompts_alternate_roles_mid_game():
    g = game()
    seen = []

    def respond(move):
        seen.append([m["role"] for m in move.messages])
        return "Is it red?" if move.player == "questioner" else "No."
    drive(g, respond)
    assert len(seen) == 62  # 31 questions without the description
    for roles in seen:
        assert roles[0] == "user" and roles[-1] == "user"
        assert all(a != b for a, b in zip(roles, roles[1:]))


def prompts(setting: str) -> dict[str, str]:
    """What each role is told in ``setting``: its rules, and the host's instruction for its first move and for an
    answer (the whole prompt of each move: rules, history, instruction)."""
    g = game(setting=setting)
    told = {"answerer rules": g.players["answerer"].rules, "questioner rules": g.players["questioner"].rules}
    seen: dict[str, str] = {}

    def respond(move):
        seen.setdefault(f"{move.player} {move.kind}", move.messages[-1]["content"])
        return "Is it an apple?" if move.player == "questioner" else ("A fruit." if move.kind == "describe" else "gameover")
    drive(g, respond)
    return {**told, **seen}


def test_without_the_description_both_roles_are_told_answers_are_yes_or_no():
    """The authors' hard mode (askguess/utils/prompt.py): both roles' rules say the answerer only replies yes, no or
    gameover, and the answerer's role allows no other word. Ours says it in its own words, to both roles, and no
    longer also offers the answerer hints."""
    told = prompts("without_description")
    assert set(told) == {"answerer rules", "questioner rules", "questioner ask", "answerer answer"}  # no description
    answerer, questioner = told["answerer rules"], told["questioner rules"]
    for rules in (answerer, questioner):
        assert "answerer gives no description and no hints" in rules
        assert "may only answer each question with 'yes' or 'no', or reply 'gameover'" in rules
    assert "some hints" not in answerer and "give the questioner" not in answerer  # the hint sentence is gone
    assert "with only 'yes' or 'no': no hints, no other words" in answerer
    assert "Your reply should only be 'yes', 'no' or 'gameover'." in answerer and "'apple'" in answerer
    assert "the answerer will only tell you 'yes' or 'no'" in questioner and "can be answered with yes or no" in questioner
    assert "apple" not in questioner and "{{" not in questioner  # the questioner does not know the word
    assert "with 'yes' or 'no'" in told["answerer answer"]


def test_with_the_description_the_answerer_describes_and_may_give_hints():
    told = prompts("with_description")
    assert set(told) == {"answerer rules", "questioner rules", "answerer describe", "questioner ask", "answerer answer"}
    answerer, questioner = told["answerer rules"], told["questioner rules"]
    assert "you can give the questioner some hints" in answerer and "'apple'" in answerer
    for said in (answerer, questioner, told["answerer answer"]):
        assert "'yes' or 'no'" not in said and "no description" not in said
    assert "describe the phrase to the questioner" in told["answerer describe"] and "apple" not in questioner


@pytest.mark.parametrize("setting", ["with_description", "without_description"])
def test_no_prompt_shows_a_format_escape(setting):
    """The questioner's rules are not formatted: a doubled brace would reach the model as written."""
    for said in prompts(setting).values():
        assert "{{" not in said and "}}" not in said and "{your guess}" in prompts(setting)["questioner rules"]
