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

Questions are read from the reply's ``question`` (``read_question``): 1, 2 or 3, a numbered form ("3.", "3)",
"Question 3:", "Q3", "#3", "question two"), the number winning and question 3 taking its player from the text after
it ("3. What is the identity of player5 ?" asks about player5), or the question's text in our wording, the authors'
("Which player is the Princess?") or a close paraphrase (``WORDINGS``: "Who do you think is the Princess?", "Who's
the real Princess?", "What role does player3 have?"…), read as the question it names, no error. A question about
another role ("Who is the Queen?", "Which one is the Minister?": the authors' Prince asked one) is none of the three.
Chat errors (counted, the game goes on): a question that is not JSON is read from its text the same way (a JSON reply
without ``question`` is not read from its thought); one that names none of the three is asked as question 1, the
transcript's ``error`` quoting it and saying why it was not read ("question 'Who is the Queen?' is not one of the
three (it asks who the Queen is): asked question 1 (Who is the Princess?) in its place"); question 3 naming no other
seated player (in ``name``, or in its text) becomes question 2;
an extra question with no valid player asked goes to the first seated player its text names, else
player1. An answer is heard as its ``speak`` and nothing else of a JSON reply (its thought stays private): a blank
``speak`` ("", spaces: what the authors' players hear as said, uncounted) is heard as the empty value and flagged
``blank speak``, a null one too and counted (the authors' host ends the game on a None answer), a JSON answer
without ``speak`` is heard as nothing and counted; only an answer that is not JSON is heard as its raw text (counted).
A final choice that names no seated
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
from dialogbench.gameeval.replies import (ReplyError, first_object, heard, normalise_player, parse_reply, player_names,
                                          read_speech, text_field)
from dialogbench.text.reply_numbers import NUMBER, bounded_int, shown

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
BLANK_SPEAK = "blank speak"  # the flag of an answer whose speak is there but says nothing ("", spaces, null)
HOLDERS = {"question": placeholders(ASK), "extra": placeholders(EXTRA), "answer": placeholders(ANSWER),
           "choose": placeholders(CHOOSE)}  # move → field → its placeholder in the prompt


# a question's number, read whole (reply_numbers.NUMBER): "1.5" or "-1" is no question, never question 1. Leading, as a
# numbered list or a label writes it: "3", "3.", "3)", "(3)", "3:", "#3", "Q3", "Question 3", "question #3 -", "No. 3"
_LEADING = re.compile(r"\s*[\"'`*_(\[]*\s*(?:(?:question|q|no\.|number|#)\s*[#:.]?\s*)?[(\[]?\s*(?P<n>" + NUMBER
                      + r")\s*(?:[.):\]]|(?!\w))(?P<rest>.*)", re.I | re.S)
# a question named by its number inside a text ("I ask question 3 about player5", "the second question")
_MENTION = re.compile(r"\b(?:question|q)\s*(?:number\s*|no\.\s*|#\s*)?"
                      r"(?:(?P<n>\d+)\b(?![.,]\d)|(?P<word>one|two|three)\b)"
                      r"|\b(?P<ordinal>first|second|third)\s+question\b", re.I)
_WORDS = {"one": 1, "two": 2, "three": 3, "first": 1, "second": 2, "third": 3}
_SEAT = r"player\s*_?\s*\d+"
_ADJ = r"(?:(?:real|true|actual|genuine)\s+)?"
_ROLE = "|".join(sorted((r.lower() for r in ("Prince", *SEATED_ROLES)), key=len, reverse=True))  # princess first
_AMONG = r"(?:\s+(?:of|among(?:st)?)\s+(?:you|them|us|the\s+(?:players|seven(?:\s+players)?)|all(?:\s+of\s+you)?))?"
_THINK = r"(?:\s+(?:do|would|did)\s+you\s+(?:think|believe|say|guess|suspect|reckon))?"
_WHO = rf"(?:who|which(?:\s+(?:player|one|person))?){_AMONG}{_THINK}"
# "Who/which [player, one] [of you] [do you think] is the [real] <role>", "who the <role> is", "identify the <role>":
# question 1 when the role is the Princess; any other role is a question none of the three asks
_ROLE_QUESTION = re.compile(
    rf"\b{_WHO}\s*(?:is|['’]s)\s+(?:the\s+)?{_ADJ}(?P<role>{_ROLE})\b"
    rf"|\bwho\s+(?:do\s+you\s+think\s+)?(?:the\s+)?{_ADJ}(?P<role2>{_ROLE})\s+is\b"
    rf"|\b(?:identify|point\s+out)\s+(?:the\s+)?{_ADJ}(?P<role3>{_ROLE})\b", re.I)
# The three questions as a question's text says them: ours (QUESTIONS), the authors' (tofukingdom/utils/prompt.py:
# "Which player is the Princess?", "What is your identity?", "What is the identity of {player_name} ?"; their Prince
# also asked "What is your identity, <name>?") and close paraphrases. Question 3 names its player where the text does
# (groups of, owner, who, does, what).
WORDINGS = (
    (1, _ROLE_QUESTION),  # when its role is the Princess
    (2, re.compile(rf"\b(?:what(?:\s+is|['’]s)\s+your\s+{_ADJ}(?:identity|role)|who\s+are\s+you\b|your\s+{_ADJ}"
                   rf"(?:identity|role)\b|what\s+(?:role|identity)\s+(?:do|did)\s+you\s+(?:have|play|hold)\b"
                   rf"|which\s+role\s+(?:are\s+you|do\s+you\s+(?:have|play|hold))\b|identify\s+yourself\b)", re.I)),
    (3, re.compile(rf"\b(?:(?:identity|role)\s+of\s+(?:(?P<of>{_SEAT})\b)?"
                   rf"|(?P<owner>{_SEAT})['’]s\s+{_ADJ}(?:identity|role)\b|who\s+is\s+(?P<who>{_SEAT})\b"
                   rf"|what\s+(?:role|identity)\s+(?:does|did|has)\s+(?P<does>{_SEAT})\b"
                   rf"|what\s+is\s+(?P<what>{_SEAT})\b)", re.I)),
)
_YES_NO = re.compile(r"\s*[\"'`*_]*\s*(?:is|are|am|was|were|do|does|did|can|could|will|would|should|has|have)\b", re.I)


def _role(match: re.Match) -> str | None:
    role = next((v for k, v in match.groupdict().items() if k.startswith("role") and v), None)
    return role.capitalize() if role else None


def _seat_after(text: str) -> str | None:
    """The player a question 3 asks about, in ``text`` (what follows its number): the one its wording names, else
    the first player named."""
    found = WORDINGS[2][1].search(text)
    named = next((v for v in found.groupdict().values() if v), None) if found else None
    return normalise_player(named) if named else next(iter(player_names(text)), None)


def _read(text: str) -> tuple[int | None, str | None, str]:
    """(1, 2 or 3, or None; for question 3 the player named, or None; why no question was read, or '')."""
    if not text.strip():
        return None, None, "no question"
    leading, problem = _LEADING.fullmatch(text), ""
    if leading:
        bounded = bounded_int(leading.group("n"), low=1, high=3, name="question")
        if bounded.value is not None:
            return bounded.value, _seat_after(leading.group("rest")) if bounded.value == 3 else None, ""
        problem = f"number {shown(leading.group('n').strip())} names none of 1, 2, 3"
    found, others = [], []  # (position, question, player named); the other roles asked about
    for number, pattern in WORDINGS:
        for match in pattern.finditer(text):
            if number == 1:
                role = _role(match)
                if role != "Princess":
                    others.append(role)
                    continue
            named = next((v for k, v in match.groupdict().items() if v and not k.startswith("role")), None)
            found.append((match.start(), number, normalise_player(named) if named else None))
            break
    for match in _MENTION.finditer(text):
        raw = match.group("n")
        if raw is not None:
            bounded = bounded_int(raw, low=1, high=3, name="question")
            if bounded.value is None:
                problem = problem or f"number {shown(raw)} names none of 1, 2, 3"
                continue
            number = bounded.value
        else:
            number = _WORDS[(match.group("word") or match.group("ordinal")).lower()]
        found.append((match.start(), number, _seat_after(text[match.end():]) if number == 3 else None))
        break
    if found:
        _, number, named = min(found, key=lambda f: f[0])
        return number, named, ""
    if others:
        return None, None, f"it asks who the {others[0]} is"
    if _YES_NO.match(text):
        return None, None, "a yes-or-no question"
    return None, None, problem or "no wording of the three"


def read_question(value, raw: str) -> tuple[int | None, str | None]:
    """Which of the three questions a reply asks, from its ``question`` value (a number, or the question's text)
    or, for a reply that is not JSON, its text: (1, 2 or 3, or None when it names none; for question 3 the player
    the text names, normalised, or None). A leading number ("3", "3.", "Question 3:") wins, and question 3 takes its
    player from the text after it; else the question the text says first, by its wording or its number ("question
    2"); a question about another role ("Who is the Queen?") is none of the three."""
    for text in (str(value) if value is not None else "", raw or ""):
        number, named, _ = _read(text)
        if number is not None:
            return number, named
    return None, None


def unread(value) -> str:
    """Why ``value`` (a question's text) reads as none of the three, in a few words."""
    return _read(str(value) if value is not None else "")[2] or "read"


class TofuKingdom(Game):
    GAME = "tofukingdom"
    # v3: a blank answer ("", spaces, null) is heard as the empty value (flagged; null a chat error, as the authors'
    # host ends a game on a None answer) and a JSON answer without speak as nothing, never the raw reply with its
    # thought; numbered questions ("3. What is the identity of player5 ?") keep the player their text names, "Who do
    # you think is the Princess?" and "question 2" are read, a JSON reply without "question" is not read from its
    # thought, and an unread question's error says why; v2: questions in the authors' wording and close paraphrases
    # are read as the question they name (v1 read "Which player is the Princess?" as an off-list question, a chat
    # error); question 3 may name its player in its text; an off-list question's fallback is said in its error
    VERSION = "tofukingdom-v3"
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
        errors = []
        try:
            reply = parse_reply(raw, required=("question",))
        except ReplyError as exc:
            errors.append(str(exc))
            reply = first_object(raw) or {}  # a JSON object without "question": read no question from its thought
        if kind == "extra":
            asked = normalise_player(reply.get("ask"))
            if asked not in self.seats:
                errors.append(f"asks {reply.get('ask')!r}, not a seated player")
                asked = next((n for n in player_names(raw) if n in self.seats), self.seats[0])
        else:
            asked = self.seats[self.round]
        number, named = read_question(reply.get("question"), "" if reply else raw)
        if number is None:
            if reply and reply.get("question") is None:
                errors.append(f"no question to read: asked question 1 ({QUESTIONS[1]}) in its place")
            else:
                said = reply.get("question") if reply else heard(raw, limit=80)
                errors.append(f"question {said!r} is not one of the three ({unread(said)}): asked question 1 "
                              f"({QUESTIONS[1]}) in its place")
            number = 1
        target = None
        if number == 3:
            # the reply's "name", else the player its question's text names (the authors' question 3 names it
            # there); a reply that is not JSON: the player its question names, else the first other player it names
            candidates = ([normalise_player(reply.get("name")), named] if reply
                          else [named, next((n for n in player_names(raw) if n in self.seats and n != asked), None)])
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
        said = read_speech(raw)
        error, flags = said.error, []
        if said.blank:  # heard as the empty value, as the authors' players hear "answer": ""
            flags.append(BLANK_SPEAK)
            if said.blank == "null":  # the authors' host ends the game on a None answer ("Answer is None."): counted
                error = "'speak' is null"
        self.event(self.asked, "answer", text=said.heard, thought=text_field(said.reply, "thought"), raw=raw,
                   valid=error is None, error=error, placeholder=repeated(said.reply, HOLDERS["answer"]), flags=flags)
        self.speak(self.asked, raw, said.heard)
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
