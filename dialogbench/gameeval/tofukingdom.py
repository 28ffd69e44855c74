"""TofuKingdom (§3.3): the Prince questions seven players to find the Princess.

Roles: Prince, Princess, Queen, Minister, Chef, Guard, Maid, Spy. Camps, one model each: Prince
camp (Prince, Princess, Chef: must tell the truth), Queen camp (Queen, Minister, Guard: must lie),
Spy camp (Spy, Maid: truth or lie as they like). Everyone but the Prince knows every identity.
The host seats the seven as player1…player7 in an order drawn from the trial seed.

The Prince asks each player, in seat order, one of three questions — 1 "Who is the Princess?",
2 "What is your identity?", 3 "What is the identity of {player}?" — then one extra question to a
player of his choice, then names the Princess. Princess named → Prince camp wins; the Queen →
Queen camp; anyone else → Spy camp. ``rounds`` counts the questions asked (8 in a full game).
Replies are chain-of-thought JSON: the Prince ``{"thought", "question", "name"}`` (extra question:
plus ``"ask"``, the player asked; final: ``{"thought", "name"}``), the others ``{"thought", "speak"}``.

Questions are read from the reply's ``question``: 1, 2 or 3, or the question's text in our wording, the authors'
("Which player is the Princess?") or a close paraphrase (``WORDINGS``), read as the question it names, no error.
Chat errors (counted, the game goes on): a question that is not JSON is read from its text the same way; one that
names none of the three is asked as question 1, the transcript's ``error`` saying so ("… is not one of the three:
asked question 1 (Who is the Princess?) in its place"); question 3 naming no other seated player (in ``name``, or
in its text) becomes question 2;
an extra question with no valid player asked goes to the first seated player its text names, else
player1; an answer that is not JSON is heard as its raw text. A final choice that names no seated
player ends the game unfinished (``end_reason`` no_choice). Whether an answer keeps its camp's
truth rule is up to the model (the host cannot know what a player means).

A move whose fields repeat the prompt's placeholder text (``"speak": "your answer"``) is read like any other, no
chat error, but flagged and counted (``placeholders.py``).
"""

from __future__ import annotations

import re

from dialogbench.gameeval.formats import MoveShape
from dialogbench.gameeval.game import Game, GameSetup, Request
from dialogbench.gameeval.placeholders import placeholders, repeated
from dialogbench.gameeval.replies import ReplyError, heard, normalise_player, parse_reply, player_names, text_field
from dialogbench.reply_numbers import NUMBER, bounded_int

SEATED_ROLES = ("Princess", "Queen", "Minister", "Chef", "Guard", "Maid", "Spy")
CAMPS = {"prince": ("Prince", "Princess", "Chef"), "queen": ("Queen", "Minister", "Guard"), "spy": ("Spy", "Maid")}
CAMP_OF = {role: camp for camp, roles in CAMPS.items() for role in roles}
TRUTH = {"prince": "must always tell the truth", "queen": "must always lie", "spy": "may tell the truth or lie"}
QUESTIONS = {1: "Who is the Princess?", 2: "What is your identity?", 3: "What is the identity of {name}?"}

RULES = """You are playing a game called "TofuKingdom" with eight roles: Prince, Princess, Queen, Minister, Chef, Guard, Maid and Spy.
Seven players, player1 to player7, hold every role but the Prince's; they all know each other's identities. The Prince does not, and must find the Princess.
The Prince asks each player one question, then one extra question to a player of his choice, then names the player he thinks is the Princess. Every question is one of:
1. Who is the Princess?
2. What is your identity?
3. What is the identity of {{player_name}}?
There are three camps. The Prince camp (Prince, Princess, Chef) must always tell the truth. The Queen camp (Queen, Minister, Guard) must always lie. The Spy camp (Spy, Maid) may tell the truth or lie.
If the Prince names the Princess, the Prince camp wins. If he names the Queen, the Queen camp wins. If he names anyone else, the Spy camp wins. Players of one camp work together against the other camps."""

PRINCE = RULES + "\nYou are the Prince. Find the Princess."
SEATED = RULES + """
You are {name}; your identity is {role}, in the {camp} camp: you {truth}.
The identities of the players: {seating}.
Answer the Prince's questions so that your camp wins."""

ASK = ('prince, ask {name} your question. Reply with only a JSON object: {{"thought": "your reasoning", '
       '"question": 1, 2 or 3, "name": "for question 3, the player whose identity you ask about"}}')
EXTRA = ('prince, you may ask one more question to any player. Reply with only a JSON object: {{"thought": "your '
         'reasoning", "ask": "the player you ask", "question": 1, 2 or 3, "name": "for question 3, the player '
         'whose identity you ask about"}}')
ANSWER = ('{name}, answer the Prince\'s question. Reply with only a JSON object: '
          '{{"thought": "your reasoning", "speak": "your answer"}}')
CHOOSE = ('prince, name the player you think is the Princess. Reply with only a JSON object: '
          '{{"thought": "your reasoning", "name": "the player"}}')
HOLDERS = {"question": placeholders(ASK), "extra": placeholders(EXTRA), "answer": placeholders(ANSWER),
           "choose": placeholders(CHOOSE)}  # move → field → its placeholder in the prompt


# a question's number, read whole (reply_numbers.NUMBER): "1.5" or "-1" is no question, never question 1
_NUMBER = re.compile(r"\s*(?:question\s*)?(" + NUMBER + r")(?!\w).*", re.I | re.S)
_SEAT = r"player\s*_?\d+"
# The three questions as a question's text says them: ours (QUESTIONS), the authors' (tofukingdom/utils/prompt.py:
# "Which player is the Princess?", "What is your identity?", "What is the identity of {player_name} ?") and close
# paraphrases. Question 3 names its player where the text does (groups of, owner, who).
WORDINGS = (
    (1, re.compile(r"\b(?:who|which(?:\s+(?:player|one))?(?:\s+of\s+(?:you|them|the\s+players|us))?)\s*(?:is|'s)\s+"
                   r"(?:the\s+)?princess\b", re.I)),
    (2, re.compile(r"\b(?:what(?:\s+is|'s)\s+your\s+(?:identity|role)|who\s+are\s+you|your\s+identity)\b", re.I)),
    (3, re.compile(rf"\b(?:(?:identity|role)\s+of\s+(?:(?P<of>{_SEAT})\b)?|(?P<owner>{_SEAT})'s\s+(?:identity|role)\b"
                   rf"|who\s+is\s+(?P<who>{_SEAT})\b)", re.I)),
)


def read_question(value, raw: str) -> tuple[int | None, str | None]:
    """Which of the three questions a reply asks, from its ``question`` value (a number, or the question's text)
    or, for a reply that is not JSON, its text: (1, 2 or 3, or None when it names none; for question 3 the player
    the text names, normalised, or None). A number wins; else the wording found first in the text."""
    for text in (str(value) if value is not None else "", raw or ""):
        number = _NUMBER.fullmatch(text)
        read = bounded_int(number.group(1), low=1, high=3, name="question").value if number else None
        if read is not None:
            return read, None
        found = [(m.start(), n, m) for n, pattern in WORDINGS if (m := pattern.search(text))]
        if found:
            _, n, match = min(found, key=lambda f: f[0])
            named = next((v for v in match.groupdict().values() if v), None)
            return n, normalise_player(named) if named else None
    return None, None


class TofuKingdom(Game):
    GAME = "tofukingdom"
    # v2: questions in the authors' wording and close paraphrases are read as the question they name (v1 read
    # "Which player is the Princess?" as an off-list question, a chat error); question 3 may name its player in its
    # text; an off-list question's fallback is said in its error
    VERSION = "tofukingdom-v2"
    FORMATS = "tofukingdom-formats-v1"  # the move shapes below; in the keys of games whose models enforce JSON

    @classmethod
    def max_moves(cls, **limits) -> int:
        """A question to each of the seven and the extra one, their eight answers, the final choice."""
        return 2 * (len(SEATED_ROLES) + 1) + 1

    def __init__(self, setup: GameSetup, **limits) -> None:
        super().__init__(setup, **limits)
        roles = list(SEATED_ROLES)
        self.rng.shuffle(roles)
        self.seats = [f"player{i}" for i in range(1, len(roles) + 1)]
        self.identity = dict(zip(self.seats, roles))
        seating = ", ".join(f"{n} is the {r}" for n, r in self.identity.items())
        self.add_player("prince", role="Prince", model=setup.assignment["prince"], rules=PRINCE)
        for name, role in self.identity.items():
            camp = CAMP_OF[role]
            self.add_player(name, role=role, model=setup.assignment[camp],
                            rules=SEATED.format(name=name, role=role, camp=camp.capitalize(), truth=TRUTH[camp],
                                                seating=seating))
        self.asked: str | None = None   # the player the current question went to
        self.phase = "question"
        self.announce("The game has started now, prince, please ask each player a question.")

    def _next_requests(self) -> list[Request]:
        seats, numbers = tuple(self.seats), (1, 2, 3)
        if self.phase == "question":
            shape = MoveShape("tofukingdom-question", ("thought", "question", "name"),
                              (("question", numbers), ("name", seats)))
            return [Request("prince", "question", ASK.format(name=self.seats[self.round]), shape)]
        if self.phase == "extra":
            shape = MoveShape("tofukingdom-extra", ("thought", "ask", "question", "name"),
                              (("ask", seats), ("question", numbers), ("name", seats)))
            return [Request("prince", "extra", EXTRA, shape)]
        if self.phase == "answer":
            shape = MoveShape("tofukingdom-answer", ("thought", "speak"))
            return [Request(self.asked, "answer", ANSWER.format(name=self.asked), shape)]
        return [Request("prince", "choose", CHOOSE, MoveShape("tofukingdom-choose", ("thought", "name"), (("name", seats),)))]

    def _on_replies(self, requests: list[Request], replies: dict[str, str]) -> None:
        request = requests[0]
        raw = replies[request.player]
        if request.kind in ("question", "extra"):
            self._question(request.kind, raw)
        elif request.kind == "answer":
            self._answer(raw)
        else:
            self._choose(raw)

    def _question(self, kind: str, raw: str) -> None:
        errors, reply = [], {}
        try:
            reply = parse_reply(raw, required=("question",))
        except ReplyError as exc:
            errors.append(str(exc))
        if kind == "extra":
            asked = normalise_player(reply.get("ask"))
            if asked not in self.seats:
                errors.append(f"asks {reply.get('ask')!r}, not a seated player")
                asked = next((n for n in player_names(raw) if n in self.seats), self.seats[0])
        else:
            asked = self.seats[self.round]
        number, named = read_question(reply.get("question"), "" if reply else raw)
        if number is None:
            said = reply.get("question") if reply else heard(raw, limit=80)
            errors.append(f"question {said!r} is not one of the three: asked question 1 ({QUESTIONS[1]}) in its place")
            number = 1
        target = None
        if number == 3:
            # the reply's "name", else the player its question's text names (the authors' question 3 names it
            # there); a reply that is not JSON: the player its question names, else the first player it names
            candidates = ([normalise_player(reply.get("name")), named] if reply
                          else [named, next(iter(player_names(raw)), None)])
            target = next((t for t in candidates if t in self.seats and t != asked), None)
            if target is None:
                about = next((t for t in candidates if t), None)
                errors.append(f"question 3 about {about!r}, not another seated player: asked question 2")
                number = 2
        question = QUESTIONS[number].format(name=target)
        self.round += 1
        self.asked, self.phase = asked, "answer"
        error = "; ".join(errors) or None
        self.event("prince", kind, text=f"{asked}, {question}", thought=text_field(reply, "thought"),
                   target=target or asked, raw=raw, valid=error is None, error=error,
                   placeholder=repeated(reply, HOLDERS[kind]))
        self.speak("prince", raw, f"{asked}, {question}")

    def _answer(self, raw: str) -> None:
        thought = error = None
        reply: dict = {}
        try:
            reply = parse_reply(raw, required=("speak",))
            thought, speech = text_field(reply, "thought"), text_field(reply, "speak")
            if speech is None:
                error, speech = "empty 'speak'", None
        except ReplyError as exc:
            error, speech = str(exc), None
        speech = speech or heard(raw)
        self.event(self.asked, "answer", text=speech, thought=thought, raw=raw, valid=error is None, error=error,
                   placeholder=repeated(reply, HOLDERS["answer"]))
        self.speak(self.asked, raw, speech)
        if self.round < len(self.seats):
            self.phase = "question"
        elif self.round == len(self.seats):
            self.phase = "extra"
        else:
            self.phase = "choose"

    def _choose(self, raw: str) -> None:
        thought = error = None
        reply: dict = {}
        try:
            reply = parse_reply(raw, required=("name",))
            thought, chosen = text_field(reply, "thought"), normalise_player(reply.get("name"))
        except ReplyError as exc:
            error, chosen = str(exc), next((n for n in player_names(raw) if n in self.seats), None)
        if chosen not in self.seats:
            error = (error + "; " if error else "") + f"names {chosen!r}, not a seated player"
            self.event("prince", "choose", thought=thought, raw=raw, valid=False, error=error,
                       placeholder=repeated(reply, HOLDERS["choose"]))
            self.end("no_choice", finished=False)
            return
        self.event("prince", "choose", text=f"I choose {chosen}.", thought=thought, target=chosen, raw=raw,
                   valid=error is None, error=error, placeholder=repeated(reply, HOLDERS["choose"]))
        role = self.identity[chosen]
        camp = CAMP_OF[role] if role in ("Princess", "Queen") else "spy"
        self.announce(f"the prince chose {chosen}, who is the {role}. The {camp.capitalize()} camp wins.", kind="result")
        self.end({"Princess": "princess_chosen", "Queen": "queen_chosen"}.get(role, "other_chosen"), outcome=camp)
