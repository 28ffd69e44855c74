"""Ask-Guess (§3.1): a questioner asks, an answerer who knows the word answers, until ``gameover``.

Two instances of one model play the two roles. Replies are plain text, as in the paper's figure 4
(no chain-of-thought JSON in this game). Each role's prompt says the setting: with the description, the answerer
describes the phrase first and may give hints (``ANSWERER``, ``QUESTIONER``); without it (the authors' hard mode,
``askguess/utils/prompt.py``, in our words), both roles are told the answerer gives no description and answers only
'yes', 'no' or 'gameover' (``ANSWERER_YES_NO``, ``QUESTIONER_YES_NO``, the host's ``ANSWER_YES_NO``); as in their
code, the host does not enforce it. The host follows the GameEval authors' code (jordddan/GameEval
``game_askguess.py``); outcomes, checked in this order after every answer (``game()`` L97-113):

* the answer says ``gameover`` → **ST** if the questioner's last question names the word, else **EE**
  (ended although the word was not guessed);
* the answer (or the opening description, L48-50) names the word → **AME**;
* the question limit without an end → **RLE**: the authors' counter ``cnt`` counts the description as a
  round and ends the game when ``cnt > 30`` (L111), so ``max_rounds`` (30) questions with the description,
  ``max_rounds + 1`` (31) without it;
* an empty reply → **CE** (``end_reason`` empty_reply); a backend that keeps failing (connection errors,
  timeouts, 5xx) is no outcome at all: the game ends ``backend_error``, a failed cell the next run replays.

"Says gameover", "names the word" and "mentions the word" are the matcher's (``gameeval.askguess.matcher``):

* ``authors`` (default), as their code: ``gameover`` or ``game over`` in the lower-cased answer (L98); a
  correct guess when the word (underscores read as spaces) occurs anywhere in the lower-cased question, a
  substring ("pineapple" guesses "apple", L99); a mentioned word when ``" word "`` occurs in the
  lower-cased reply once every character that is neither a word character nor whitespace is a space
  (``checkin``, L14-25: "an apple." mentions it, "Apples" and a reply that starts with the word do not);
* ``whole_word``: dialogbench's earlier rule, a whole-word, case-insensitive match of the label with its
  underscores read as spaces or hyphens, plural ``s``/``es`` allowed (``aquarium_fish`` matches "Aquarium
  fishes"), for the guess and the mention alike; ``game over`` also as "game-over", "Game  Over".

``rounds`` (the row's column) is the number of questions asked; the authors' round count (questions − 1
without the description) is computed in SQL (``gameeval_askguess``).
"""

from __future__ import annotations

import re

from dialogbench.gameeval.game import Game, GameSetup, Request
from dialogbench.gameeval.words import spoken, word_pattern

SETTINGS = ("with_description", "without_description")
MATCHERS = ("authors", "whole_word")
GAMEOVER = re.compile(r"game\s*[-_]?\s*over", re.I)
_NOT_WORD_OR_SPACE = re.compile(r"[^\w\s]")
_SPEAKER_TAG = re.compile(r"^\s*(?:##)?\s*(?:questioner|answerer)\s*(?:##)?\s*:\s*", re.I)

RULES = """You are playing a game called "Ask-Guess".
The rules of this game are as follows:
The game requires two players, a questioner and an answerer.
At the beginning of the game, the answerer is given a word or phrase as an answer.
The questioner is unaware of the phrase.
The questioner needs to guess the phrase by asking a series of questions and combining them with the answerer's responses.
The answerer should answer the question faithfully with short response.
The goal of the game is to guess the given phrase using as few rounds of Q&A as possible."""

ANSWERER = RULES + """
Now, you are the answerer, you can only answer the questioner's question.
The given phrase is '{word}'.
You should answer the question from the questioner faithfully and you can give the questioner some hints in your response to help the questioner to guess the answer, but you are not allowed to directly mention the phrase '{word}' in your response.
If the questioner has directly guessed out the phrase '{word}' you must reply 'gameover'.
Phrase like 'a type of {word}' or 'a kind of {word}' should also be considered as a correct guess.
The phrase '{word}' must not appear in your reply.
Now the game starts. Your reply should only contain the answer."""

QUESTIONER = RULES + """
Now, you are the questioner. You do not know the phrase.
In each round ask the answerer exactly one question that narrows down what the phrase can be, using everything the answerer has said so far.
When you think you know the phrase, guess it directly, for example: "Is it a {your guess}?".
Now the game starts. Your reply should only contain one question."""

DESCRIBE = "answerer, before the questions start, describe the phrase to the questioner in one or two sentences, without mentioning it."
ASK = "questioner, round {round}: ask your question."
ANSWER = "answerer, answer the questioner's question (reply 'gameover' if the phrase was guessed)."

# Without the opening description (the authors' hard mode, askguess/utils/prompt.py: both roles' rules say the
# answerer only replies yes, no or gameover, and the answerer's role forbids any other word) both roles are told so;
# our wording, their repository has no licence. Their host does not check the answers, and neither does ours.
YES_NO = """
In this game the answerer gives no description and no hints: it may only answer each question with 'yes' or 'no', or reply 'gameover' once the questioner has guessed the phrase."""
ANSWERER_YES_NO = RULES + YES_NO + """
Now, you are the answerer. The given phrase is '{word}'.
Answer each of the questioner's questions faithfully with only 'yes' or 'no': no hints, no other words.
If the questioner has directly guessed out the phrase '{word}' you must reply 'gameover'.
Phrase like 'a type of {word}' or 'a kind of {word}' should also be considered as a correct guess.
The phrase '{word}' must not appear in your reply.
Now the game starts. Your reply should only be 'yes', 'no' or 'gameover'."""
QUESTIONER_YES_NO = RULES + YES_NO + """
Now, you are the questioner. You do not know the phrase, and the answerer will only tell you 'yes' or 'no'.
In each round ask the answerer exactly one question that can be answered with yes or no and narrows down what the phrase can be, using every answer so far.
When you think you know the phrase, guess it directly, for example: "Is it a {your guess}?".
Now the game starts. Your reply should only contain one question."""
ANSWER_YES_NO = "answerer, answer the questioner's question with 'yes' or 'no' (reply 'gameover' if the phrase was guessed)."



def authors_gameover(text: str) -> bool:
    """``game_askguess.py`` L98."""
    text = text.lower()
    return "gameover" in text or "game over" in text


def authors_checkin(word: str, text: str) -> bool:
    """``game_askguess.py`` ``checkin`` (L14-25), called with both sides lower-cased (L48, L108)."""
    return (" " + word.lower() + " ") in _NOT_WORD_OR_SPACE.sub(" ", text.lower())


class Matcher:
    """The three text tests the host makes: the answer ends the game, the question names the word, a reply
    mentions the word."""

    def __init__(self, label: str, kind: str = "authors") -> None:
        if kind not in MATCHERS:
            raise ValueError(f"Ask-Guess matcher {kind!r} (expected one of {', '.join(MATCHERS)})")
        self.kind, self.word, self.pattern = kind, spoken(label), word_pattern(label)

    def gameover(self, answer: str) -> bool:
        return authors_gameover(answer) if self.kind == "authors" else bool(GAMEOVER.search(answer))

    def guessed(self, question: str) -> bool:
        if self.kind == "authors":  # L99: word.lower() in question.lower()
            return self.word.lower() in question.lower()
        return bool(self.pattern.search(question))

    def mentioned(self, reply: str) -> bool:
        return authors_checkin(self.word, reply) if self.kind == "authors" else bool(self.pattern.search(reply))


def question_limit(max_rounds: int, setting: str) -> int:
    """Questions before RLE: the authors' ``cnt`` (L31, L61, L95) counts the description as one, and the game
    ends once ``cnt > max_rounds`` (L111)."""
    return max_rounds + (0 if setting == "with_description" else 1)


def clean(text: str | None) -> str:
    return _SPEAKER_TAG.sub("", (text or "").strip()).strip()


class AskGuess(Game):
    GAME = "askguess"
    # v3: without the description both roles' prompts say so (answers yes, no or gameover only; the answerer's no
    # longer also offers hints), the questioner's too; v2: the authors' matcher (``matcher``), question limit (31
    # without the description) and yes/no answers without the description; games of earlier versions are other
    # cells, so a rerun replays them instead of mixing rule sets
    VERSION = "askguess-v3"

    @classmethod
    def max_moves(cls, *, max_rounds: int = 30, **limits) -> int:
        """A question and its answer for every question either setting allows, and the description."""
        return 2 * max(question_limit(max_rounds, s) for s in ("with_description", "without_description")) + 1

    def __init__(self, setup: GameSetup, *, max_rounds: int = 30, matcher: str = "authors", **limits) -> None:
        super().__init__(setup, **limits)
        if setup.setting not in SETTINGS:
            raise ValueError(f"Ask-Guess setting {setup.setting!r} (expected one of {', '.join(SETTINGS)})")
        self.word, self.max_rounds = spoken(setup.item), max_rounds
        self.max_questions = question_limit(max_rounds, setup.setting)
        self.matcher = Matcher(setup.item, matcher)
        yes_no = setup.setting == "without_description"
        self.add_player("questioner", role="questioner", model=setup.assignment["questioner"],
                        rules=QUESTIONER_YES_NO if yes_no else QUESTIONER)
        self.add_player("answerer", role="answerer", model=setup.assignment["answerer"],
                        rules=(ANSWERER_YES_NO if yes_no else ANSWERER).format(word=self.word))
        self.answer_prompt = ANSWER_YES_NO if yes_no else ANSWER
        self.phase = "describe" if setup.setting == "with_description" else "ask"
        self.last_question = ""
        self.announce("the game starts now.")

    def step_limit_outcome(self) -> str:
        return "CE"

    def _next_requests(self) -> list[Request]:
        if self.phase == "describe":
            return [Request("answerer", "describe", DESCRIBE)]
        if self.phase == "ask":
            return [Request("questioner", "ask", ASK.format(round=self.round + 1))]
        return [Request("answerer", "answer", self.answer_prompt)]

    def _on_replies(self, requests: list[Request], replies: dict[str, str]) -> None:
        request = requests[0]
        raw = replies[request.player]
        text = clean(raw)
        if not text:
            self.event(request.player, request.kind, raw=raw, valid=False, error="empty reply")
            self.end("empty_reply", outcome="CE")
            return
        if request.kind == "ask":
            self.round += 1
            self.last_question = text
            self.event("questioner", "ask", text=text, raw=raw)
            self.speak("questioner", raw, text)
            self.phase = "answer"
            return
        self.event("answerer", request.kind, text=text, raw=raw)
        if request.kind == "answer" and self.matcher.gameover(text):
            guessed = self.matcher.guessed(self.last_question)
            self.end("gameover_correct" if guessed else "gameover_wrong", outcome="ST" if guessed else "EE")
        elif self.matcher.mentioned(text):
            self.end("answer_mentioned", outcome="AME")
        elif request.kind == "answer" and self.round >= self.max_questions:
            self.end("round_limit", outcome="RLE")
        else:
            self.speak("answerer", raw, text)
            self.phase = "ask"
