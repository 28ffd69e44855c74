"""SpyFall (§3.2): six players, one spy; describe-then-vote rounds until the spy is out or wins.

The spy gets the pair's spy word, the five villagers the common word; nobody is told which word
they got. Each round the living players, in an order the host draws, describe their word one after
another (each hears the descriptions before it), then all of them vote at once; the votes and their
reasons are then made public. Replies are chain-of-thought JSON (§4.1, appendix C): describe
``{"thought", "speak"}``, vote ``{"thought", "speak", "name"}``.

Host rules (the paper leaves these open; documented here and in the README):

* **Tie**: the most-voted player is eliminated; a tie is broken by a draw among the tied players
  (from the trial seed, so replays agree). No valid vote at all: nobody is eliminated that round.
* **End**: the spy eliminated → villagers win; fewer than three players left with the spy alive →
  the spy wins. ``max_rounds`` rounds without either → ``round_limit`` (not finished, no winner).
* **Spy living rounds**: the rounds the spy took part in (eliminated in round 2 → 2).
* **Chat errors** (counted, the game goes on): a description that is not JSON is heard as its raw
  text (cut to 300 characters); one that says the speaker's own word is heard with the word masked;
  a vote that is not JSON counts for the first living player its text names, else is void; a vote
  for oneself, a dead or an unknown player is void.
* **Constrained moves** (a backend that enforces JSON schemas): a description is ``{"thought",
  "speak"}``, a vote ``{"thought", "speak", "name"}`` with ``name`` one of the *other* living players
  (``_vote_shape``), so a constrained vote always counts.
"""

from __future__ import annotations

from collections import Counter

from dialogbench.gameeval.askguess import word_pattern
from dialogbench.gameeval.formats import MoveShape
from dialogbench.gameeval.game import Game, GameSetup, Request
from dialogbench.gameeval.replies import ReplyError, heard, normalise_player, parse_reply, player_names, text_field
from dialogbench.gameeval.words import spoken

PLAYERS = 6
MIN_PLAYERS = 3

RULES = """You are playing a game called "SpyFall" with five other players: {players}.
The rules of this game are as follows:
At the beginning of the game every player receives a word. One player, the spy, receives the spy word; everyone else receives the common word. The two words are different but related. Nobody is told which word they received, so you do not know whether you are the spy.
Each round has two stages. First, every living player describes the word they received, one after another, without saying the word itself. Second, every living player votes for the player they think is the spy and says why.
The player with the most votes is eliminated. If the spy is eliminated, the villagers win. If fewer than three players are left and the spy is still alive, the spy wins.
Listen to the others' descriptions: if they seem to describe a different word than yours, you may be the spy, and then you should hide it by describing in a way that fits their word.
You are {name}. Your word is '{word}'."""

DESCRIBE = ('{name}, it is your turn to describe your word, without saying it. Reply with only a JSON object: '
            '{{"thought": "what you infer about the words and the players, and your plan", "speak": "your description"}}')
VOTE = ('{name}, vote for the player you think is the spy. Living players: {living}. Reply with only a JSON object: '
        '{{"thought": "your reasoning", "speak": "what you say to the others", "name": "the player you vote for"}}')


def _vote_shape(voter: str, living: list[str]) -> MoveShape:
    """A vote names another living player: the only votes that count under these rules (a vote for
    oneself is void), so a constrained voter always casts one."""
    return MoveShape("spyfall-vote", ("thought", "speak", "name"), (("name", tuple(n for n in living if n != voter)),))


class SpyFall(Game):
    GAME = "spyfall"
    VERSION = "spyfall-v1"
    FORMATS = "spyfall-formats-v2"  # the move shapes below; in the keys of games whose models enforce JSON

    def __init__(self, setup: GameSetup, *, max_rounds: int = 10, **limits) -> None:
        super().__init__(setup, **limits)
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
        self.living = list(names)
        self.queue: list[str] = []
        self.phase = "start"
        self.spy_rounds: int | None = None
        self.announce("the game now starts, players, please take turns to speak.")

    def _result(self) -> dict:
        return {"spy_living_rounds": self.spy_rounds}

    def _start_round(self) -> None:
        self.round += 1
        self.queue = self.living[:]
        self.rng.shuffle(self.queue)
        self.announce(f"Now the living players are: {self.queue}")
        self.phase = "describe"

    def _next_requests(self) -> list[Request]:
        if self.phase == "start":
            self._start_round()
        if self.phase == "describe":
            name = self.queue[0]
            return [Request(name, "describe", DESCRIBE.format(name=name), MoveShape("spyfall-describe", ("thought", "speak")))]
        living = ", ".join(self.living)
        return [Request(name, "vote", VOTE.format(name=name, living=living), _vote_shape(name, self.living))
                for name in self.living]

    def _on_replies(self, requests: list[Request], replies: dict[str, str]) -> None:
        if requests[0].kind == "describe":
            self._describe(requests[0].player, replies[requests[0].player])
        else:
            self._vote(replies)

    def _describe(self, name: str, raw: str) -> None:
        thought, error = None, None
        try:
            reply = parse_reply(raw, required=("speak",))
            thought, speech = text_field(reply, "thought"), text_field(reply, "speak")
            if speech is None:
                error, speech = "empty 'speak'", heard(raw)
        except ReplyError as exc:
            error, speech = str(exc), heard(raw)
        pattern = word_pattern(self.words[name])
        if pattern.search(speech):
            error = (error + "; " if error else "") + "said its own word (masked)"
            speech = pattern.sub("***", speech)
        self.event(name, "describe", text=speech, thought=thought, raw=raw, valid=error is None, error=error)
        self.speak(name, raw, speech)
        self.queue.pop(0)
        if not self.queue:
            self.announce("now the voting starts, please vote for the player you think is the spy "
                          "and tell the reason why you think he is a spy.")
            self.phase = "vote"

    def _vote(self, replies: dict[str, str]) -> None:
        votes: Counter[str] = Counter()
        for voter in self.living:
            raw = replies[voter]
            thought = speech = target = error = None
            try:
                reply = parse_reply(raw, required=("name",))
                thought, speech = text_field(reply, "thought"), text_field(reply, "speak")
                target = normalise_player(reply.get("name"))
            except ReplyError as exc:
                error = str(exc)
                target = next((n for n in player_names(raw) if n in self.living and n != voter), None)
            if target is not None and (target not in self.living or target == voter):
                error = f"void vote for {target} ({'itself' if target == voter else 'not a living player'})"
                target = None
            elif target is None and error is None:
                error = "vote names no player"
            self.event(voter, "vote", text=speech, thought=thought, target=target, raw=raw,
                       valid=error is None, error=error)
            self.speak(voter, raw, f"I vote for {target or 'nobody'}." + (f" {speech}" if speech else ""))
            if target is not None:
                votes[target] += 1
        self._tally(votes)

    def _tally(self, votes: Counter[str]) -> None:
        if not votes:
            self.announce("no valid vote was cast; nobody is eliminated. Now the game continues.", kind="result")
        else:
            top = max(votes.values())
            tied = sorted(n for n, v in votes.items() if v == top)
            out = tied[0] if len(tied) == 1 else self.rng.choice(tied)
            drawn = f" ({', '.join(tied)} tied with {top} votes; the host drew {out})" if len(tied) > 1 else ""
            self.living.remove(out)
            if out == self.spy:
                self.spy_rounds = self.round
                self.announce(f"{out} received the most votes{drawn} and is the spy. The villagers win.", kind="result")
                self.end("spy_eliminated", outcome="villagers")
                return
            if len(self.living) < MIN_PLAYERS:
                self.spy_rounds = self.round
                self.announce(f"{out} received the most votes{drawn}, but he is not the spy. Fewer than "
                              f"{MIN_PLAYERS} players are left: the spy ({self.spy}) wins.", kind="result")
                self.end("spy_survived", outcome="spy")
                return
            self.announce(f"{out} received the most votes{drawn}, but he is not the spy. Now the game continues.",
                          kind="result")
        if self.round >= self.max_rounds:
            self.end("round_limit", finished=False)
        else:
            self.phase = "start"
