"""SpyFall (§3.2): six players, one spy; describe-then-vote rounds until the spy is out or wins.

The spy gets the pair's spy word, the five villagers the common word; nobody is told which word
they got. Replies are chain-of-thought JSON (§4.1, appendix C): describe ``{"thought", "speak"}``,
vote ``{"thought", "speak", "name"}``.

The host follows the GameEval authors' code (jordddan/GameEval ``game_spyfall.py``, which produced
the paper's numbers); the README's rules table lists each rule with its source line:

* **Order**: one seating order, drawn from the trial seed when the game starts, is the speaking and
  the voting order of every round; the eliminated drop out of it.
* **Describe**: the living players, in that order, describe their word; each hears the earlier ones.
* **Vote**: the living players vote in that order, one after another, and each vote (with its
  reason) is public at once: a later voter hears the earlier votes. The ``name`` counts as written
  (no normalising): a vote for oneself counts; one for a dead or unknown player counts for that
  name, and one with no readable name (not JSON, null, or an object without all of ``thought``, ``speak`` and
  ``name``: the authors' ``vote()`` reads the three in turn and stops at a missing one) for ``None``: no living
  player. Other keys are ignored.
* **Result**: the most-voted name; a tie goes to the name that was voted for first among the tied.
  If that name is no living player, the game is **discarded** (``outcome = "discarded"``, not
  finished, cached like any ended game; the metrics leave it out and count it apart). The spy
  eliminated → villagers win; otherwise the named player is out, and with ``SPY_WINS_AT`` (3) or
  fewer players left the spy wins (with six players: after surviving three votes).
  ``max_rounds`` rounds without an end → ``round_limit`` (not finished, no winner).
* **Spy living rounds**: the rounds the spy took part in (eliminated in round 2 → 2; a spy win → 3).
* **Own word**: a description that says the speaker's own word is heard as said, as the authors' players hear it
  (their host never checks), and flagged ("said its own word"); with ``mask_own_word`` the others hear it with the
  word masked as ``***`` and it is a chat error (dialogbench's rule before ``spyfall-v3``).
* **Private thoughts**: the others hear a description's ``speak`` and nothing else of a JSON reply. A blank
  ``speak`` ("", spaces, null) is heard as the empty value ("player3: "), as the authors' players hear it
  (``game_spyfall.py`` passes ``speak`` on as it came); they count nothing for it, so it is no chat error here
  either, but the entry is flagged ``blank speak`` (a vote's too: "I vote for player2." alone). A JSON
  description without ``speak`` is heard as nothing (a chat error below).
* **Chat errors** (counted, the game goes on): a description that is not JSON is heard as its raw
  text (cut to 300 characters: it has no thought to tell apart); one whose JSON has no ``speak`` as the empty
  value; a vote that is not JSON, lacks ``thought``, ``speak`` or ``name`` or names no
  living player is invalid (and counts as above).
* **Placeholders**: a move whose fields repeat the prompt's placeholder text ("your description") is read like
  any other (the authors' host reads ``speak`` whatever it says): no chat error, but flagged and counted
  (``placeholders.py``).
* **Constrained moves** (a backend that enforces JSON schemas): a description is ``{"thought",
  "speak"}``, a vote ``{"thought", "speak", "name"}`` with ``name`` one of the living players, the
  voter included (``_vote_shape``), so a constrained vote never discards a game.
"""

from __future__ import annotations

import json

from dialogbench.gameeval.words import word_pattern
from dialogbench.gameeval.formats import MoveShape
from dialogbench.gameeval.game import Game, GameSetup, Request
from dialogbench.gameeval.placeholders import placeholders, repeated
from dialogbench.gameeval.replies import ReplyError, parse_reply, read_speech, text_field
from dialogbench.gameeval.words import spoken

PLAYERS = 6
SPY_WINS_AT = 3  # the spy wins when a vote leaves this many players or fewer (authors: `len(living) <= 3`)

RULES = """You are playing a game called "SpyFall" with five other players: {players}.
The rules of this game are as follows:
At the beginning of the game every player receives a word. One player, the spy, receives the spy word; everyone else receives the common word. The two words are different but related. Nobody is told which word they received, so you do not know whether you are the spy.
Each round has two stages. First, every living player describes the word they received, one after another, without saying the word itself. Second, every living player votes for the player they think is the spy and says why.
The player with the most votes is eliminated. If the spy is eliminated, the villagers win. If fewer than three players are left and the spy is still alive, the spy wins.
Listen to the others' descriptions: if they seem to describe a different word than yours, you may be the spy, and then you should hide it by describing in a way that fits their word.
You are {name}. Your word is '{word}'."""

DESCRIBE = ('{name}, it is your turn to describe your word, without saying it. Reply with only a JSON object: '
            '{{"thought": "what you infer about the words and the players, and your plan", "speak": "your description"}}')
VOTE_KEYS = ("thought", "speak", "name")  # base_agent.py vote() L139-141 reads them in turn: one missing → name None
VOTE = ('{name}, vote for the player you think is the spy. Living players: {living}. Reply with only a JSON object: '
        '{{"thought": "your reasoning", "speak": "what you say to the others", "name": "the player you vote for"}}')
HOLDERS = {"describe": placeholders(DESCRIBE), "vote": placeholders(VOTE)}  # field → its placeholder in the prompt
BLANK_SPEAK = "blank speak"  # the flag of a move whose speak is there but says nothing ("", spaces, null)


def _vote_shape(living: list[str]) -> MoveShape:
    """A vote names a living player, the voter included (a vote for oneself counts), so a constrained
    voter never names a non-player."""
    return MoveShape("spyfall-vote", ("thought", "speak", "name"), (("name", tuple(living)),))


def written_name(value):
    """A vote's ``name`` as written: strings untouched (no normalising, no stripping), None for null;
    other JSON values as themselves when hashable, else as their JSON text. Only an exact match of a
    living player's name names that player."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


class SpyFall(Game):
    GAME = "spyfall"
    # v4: a description's blank speak ("", spaces, null) is heard as the empty value, as the authors' players hear
    # it, flagged and no chat error, and a JSON description without speak is heard as nothing (both were heard as the
    # raw reply, thought included, and counted); v3: a description that says its own word is heard as said (masked
    # as *** only with mask_own_word), a vote without thought, speak and name counts for no one; v2: the authors'
    # rules (v1: simultaneous votes, seeded tie draws, void votes)
    VERSION = "spyfall-v4"
    FORMATS = "spyfall-formats-v3"  # the move shapes below; in the keys of games whose models enforce JSON

    @classmethod
    def max_moves(cls, *, max_rounds: int = 10, **limits) -> int:
        """Every player's description and vote in every round."""
        return 2 * PLAYERS * max_rounds

    def __init__(self, setup: GameSetup, *, max_rounds: int = 10, mask_own_word: bool = False, **limits) -> None:
        super().__init__(setup, **limits)
        self.mask_own_word = mask_own_word
        spy_word, common_word = (w.strip() for w in setup.item.split(",", 1))
        names = [f"player{i}" for i in range(1, PLAYERS + 1)]
        self.spy = self.rng.choice(names)
        self.max_rounds = max_rounds
        self.words = {}
        for name in names:
            word = spy_word if name == self.spy else common_word
            self.words[name] = word
            others = ", ".join(n for n in names if n != name)
            self.add_player(name, role="spy" if name == self.spy else "villager",
                            model=setup.assignment["spy" if name == self.spy else "villager"],
                            rules=RULES.format(players=others, name=name, word=spoken(word)))
        self.order = names[:]  # the seating order: who speaks and votes when, drawn once for the whole game
        self.rng.shuffle(self.order)
        self.living = self.order[:]  # always in seating order
        self.queue: list[str] = []
        self.votes: list = []  # this round's votes so far, in voting order: the names as written
        self.phase = "start"
        self.spy_rounds: int | None = None
        self.announce("the game now starts, players, please take turns to speak.")

    def _result(self) -> dict:
        return {"spy_living_rounds": self.spy_rounds}

    def _start_round(self) -> None:
        self.round += 1
        self.queue = self.living[:]
        self.announce(f"Now the living players are: {self.queue}")
        self.phase = "describe"

    def _next_requests(self) -> list[Request]:
        if self.phase == "start":
            self._start_round()
        name = self.queue[0]
        if self.phase == "describe":
            return [Request(name, "describe", DESCRIBE.format(name=name),
                            MoveShape("spyfall-describe", ("thought", "speak")))]
        return [Request(name, "vote", VOTE.format(name=name, living=", ".join(self.living)), _vote_shape(self.living))]

    def _on_replies(self, requests: list[Request], replies: dict[str, str]) -> None:
        [request] = requests
        if request.kind == "describe":
            self._describe(request.player, replies[request.player])
        else:
            self._vote(request.player, replies[request.player])

    def _describe(self, name: str, raw: str) -> None:
        said = read_speech(raw)
        speech, error, reply, flags = said.heard, said.error, said.reply, []
        thought = text_field(reply, "thought")
        if said.blank:  # heard as the empty value, as the authors' players hear it; no chat error (theirs count none)
            flags.append(BLANK_SPEAK)
        pattern = word_pattern(self.words[name])
        if pattern.search(speech):
            if self.mask_own_word:
                error = (error + "; " if error else "") + "said its own word (masked)"
                speech = pattern.sub("***", speech)
            else:
                flags.append("said its own word")
        self.event(name, "describe", text=speech, thought=thought, raw=raw, valid=error is None, error=error,
                   placeholder=repeated(reply, HOLDERS["describe"]), flags=flags)
        self.speak(name, raw, speech)
        self.queue.pop(0)
        if not self.queue:
            self.announce("now the voting starts, please vote for the player you think is the spy "
                          "and tell the reason why you think he is a spy.")
            self.phase, self.queue, self.votes = "vote", self.living[:], []

    def _vote(self, voter: str, raw: str) -> None:
        """One vote, public at once: the voters after it hear it before they vote."""
        thought = speech = name = error = None
        reply: dict = {}
        try:
            reply = parse_reply(raw, required=VOTE_KEYS)
            thought, speech = text_field(reply, "thought"), text_field(reply, "speak")
            name = written_name(reply["name"])
        except ReplyError as exc:
            error = f"{exc}: the vote counts for no one"
        if error is None and name not in self.living:
            error = "vote names no player" if name is None else f"vote for {name!r}: not a living player"
        target = None if name is None else str(name)
        blank = bool(reply) and speech is None  # a read vote whose speak says nothing: "I vote for X." alone
        self.event(voter, "vote", text=speech, thought=thought, target=target, raw=raw, valid=error is None,
                   error=error, placeholder=repeated(reply, HOLDERS["vote"]), flags=[BLANK_SPEAK] if blank else [])
        self.speak(voter, raw, f"I vote for {target or 'nobody'}." + (f" {speech}" if speech else ""))
        self.votes.append(name)
        self.queue.pop(0)
        if not self.queue:
            self._tally()

    def _tally(self) -> None:
        counts: dict = {}
        for name in self.votes:  # insertion order: the order in which each name was first voted for
            counts[name] = counts.get(name, 0) + 1
        top = max(counts.values())
        tied = [n for n, c in counts.items() if c == top]
        out = tied[0]  # the first voted for among the tied
        self.votes = []
        how = f" ({len(tied)} names tied with {top} votes; {out!r} was voted for first)" if len(tied) > 1 else ""
        if out not in self.living:
            self.announce(f"the most votes went to {out!r}{how}, which is no living player: the game is discarded.",
                          kind="result")
            self.end("voted_no_player", outcome="discarded", finished=False)
            return
        self.living.remove(out)
        if out == self.spy:
            self.spy_rounds = self.round
            self.announce(f"{out} received the most votes{how} and is the spy. The villagers win.", kind="result")
            self.end("spy_eliminated", outcome="villagers")
            return
        if len(self.living) <= SPY_WINS_AT:
            self.spy_rounds = self.round
            self.announce(f"{out} received the most votes{how}, but he is not the spy. Only {len(self.living)} "
                          f"players are left: the spy ({self.spy}) wins.", kind="result")
            self.end("spy_survived", outcome="spy")
            return
        self.announce(f"{out} received the most votes{how}, but he is not the spy. Now the game continues.",
                      kind="result")
        if self.round >= self.max_rounds:
            self.end("round_limit", finished=False)
        else:
            self.phase = "start"
