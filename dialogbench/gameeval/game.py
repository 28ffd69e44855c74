"""What every game shares: players with private histories, a rule-driven host, a transcript, the end.

A game is a state machine. ``pending()`` lists the moves it waits for now (one player's, or several
at once when a game's rules ask for simultaneous moves); the stepper sends them, with every other game's, to the backend and
hands the replies back through ``resolve()``. Subclasses say what to ask next (``_requests``) and what
the replies do (``_on_replies``); this class keeps the bookkeeping:

* **Private history** (§4.1): a player's history holds the host's announcements to it, every public
  speech of the others (``"player3: …"`` as a user message) and its own raw replies, thoughts
  included, as assistant messages. Nobody else sees those thoughts.
* **Prompt**: the player's rules, then its history, then the host's instruction for this move (not
  kept in the history). Consecutive messages of one role are merged, so strict chat templates that
  require alternating roles accept every prompt.
* **Backend errors** (a connection error, a timeout, a 5xx after the backend's own retries): the move is asked
  again in the next step (a new seed), at most ``max_retries`` times; then the game ends with
  ``end_reason = "backend_error"`` and no outcome: it is not a computed cell (``failures`` has it, the next run
  replays it) and no metric scores it. A backend error is the backend's, never the player's: it is in the
  transcript (``valid = false``, ``error = "backend: …"``) but never counted as a chat error.
* **Flags**: a move can be valid and still worth a word: each transcript entry has its flags in ``move_flags``
  (the row's list, aligned with the transcript; None: nothing), e.g. a move that repeats its prompt's placeholder
  text (``placeholders.py``, counted in ``placeholder_moves``) or a SpyFall description that says its own word.
* **Seeds**: the trial seed fixes the host's draws (roles, seating order); each move's
  sampling seed derives from (trial seed, step, player), so a game replays identically whatever
  other games share its batches.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from dialogbench.backends.base import Completion, Message
from dialogbench.gameeval.formats import MoveShape
from dialogbench.cells.keys import fingerprint
from dialogbench.text.redact import redact_optional
from dialogbench.run.runs import now


@dataclass(frozen=True)
class GameSetup:
    """One cell: which game, on what, which trial, who plays which role (role or camp → model)."""

    cell_key: str
    game: str
    item_id: str
    item: str
    setting: str
    trial: int
    seed: int
    assignment: dict[str, str]


@dataclass(frozen=True)
class Request:
    player: str
    kind: str
    instruction: str
    shape: MoveShape | None = None  # the JSON the instruction asks for (None: free text)


@dataclass
class Move:
    """A move the game waits for: send ``messages`` to ``model``'s backend, sampled with ``seed``."""

    game: "Game"
    player: str
    model: str
    kind: str
    messages: list[Message]
    seed: int
    shape: MoveShape | None = None


def move_seed(trial_seed: int, step: int, player: str) -> int:
    return int(fingerprint("move", trial_seed, step, player)[:8], 16) & 0x7FFFFFFF


def merge_roles(messages: list[Message]) -> list[Message]:
    merged: list[Message] = []
    for message in messages:
        if merged and merged[-1]["role"] == message["role"]:
            merged[-1] = {"role": message["role"], "content": merged[-1]["content"] + "\n" + message["content"]}
        else:
            merged.append(dict(message))
    return merged


@dataclass
class Player:
    name: str
    role: str
    model: str
    rules: str
    history: list[Message] = field(default_factory=list)


class Game:
    GAME = ""
    VERSION = ""
    FORMATS = ""  # version of the games' move shapes ("": free-text moves only)

    @classmethod
    def max_moves(cls, **limits) -> int:
        """The most moves (replies of a player) one game may take under ``limits`` (its ``__init__``'s), not counting
        the moves a backend error asks again (they generate nothing): what ``dialogbench plan`` sizes a game by."""
        raise NotImplementedError

    def __init__(self, setup: GameSetup, *, max_retries: int = 2, max_steps: int = 200) -> None:
        self.setup = setup
        self.rng = random.Random(setup.seed)
        self.players: dict[str, Player] = {}
        self.transcript: list[dict] = []
        self.step = 0
        self.round = 0
        self.max_retries, self.max_steps = max_retries, max_steps
        self.outcome: str | None = None
        self.end_reason: str | None = None
        self.finished = False
        self.ended = False
        self.chat_errors = 0
        self.constrained_moves = 0
        self.placeholder_moves = 0  # moves with a field that repeats the prompt's placeholder (``placeholders.py``)
        self.engines: set[str] = set()  # engine versions that played its moves
        self.prompt_tokens = self.completion_tokens = 0
        self.move_prompt_tokens: list[int | None] = []  # per transcript entry: its move's tokens (None: the host's)
        self.move_completion_tokens: list[int | None] = []
        self.move_flags: list[str | None] = []  # per transcript entry: its flags, "; "-joined (None: none)
        self._spent: dict[str, tuple[int, int]] = {}  # player → tokens of its reply not in the transcript yet
        self.backend_errors: list[tuple[str, str]] = []  # (player, error), for the failures table
        self._requests: list[Request] | None = None
        self._collected: dict[str, str] = {}
        self._attempts: dict[str, int] = {}

    # -- what subclasses implement ---------------------------------------------------------------
    def _next_requests(self) -> list[Request]:
        raise NotImplementedError

    def _on_replies(self, requests: list[Request], replies: dict[str, str]) -> None:
        raise NotImplementedError

    def _result(self) -> dict:
        """Game-specific columns of the row (``spy_living_rounds``)."""
        return {}

    # -- the host's tools ------------------------------------------------------------------------
    def add_player(self, name: str, *, role: str, model: str, rules: str) -> None:
        self.players[name] = Player(name, role, model, rules)

    def event(self, speaker: str, kind: str, *, text: str | None = None, thought: str | None = None,
              target: str | None = None, raw: str | None = None, valid: bool = True, error: str | None = None,
              backend_failed: bool = False, placeholder: Sequence[str] = (), flags: Sequence[str] = ()) -> None:
        """One transcript entry. An invalid move counts as a chat error, unless the backend failed to answer
        (``backend_failed``): that is no move of the player's. ``placeholder``: the move's fields that repeat the
        prompt's placeholder text (flagged and counted, whatever ``valid`` says); ``flags``: other notes on it."""
        player = self.players.get(speaker)
        # a player's entry records the move it just replied (each reply is one entry: its move, or its backend error)
        prompt_tokens, completion_tokens = self._spent.pop(speaker, (None, None))
        self.move_prompt_tokens.append(prompt_tokens)
        self.move_completion_tokens.append(completion_tokens)
        notes = [*flags, *([f"placeholder: {', '.join(placeholder)}"] if placeholder else [])]
        self.move_flags.append("; ".join(notes) or None)
        self.placeholder_moves += bool(placeholder)
        self.transcript.append({"step": self.step, "round": self.round, "speaker": speaker,
                                "role": player.role if player else "host", "model": player.model if player else None,
                                "kind": kind, "text": text, "thought": thought, "target": target, "raw": raw,
                                "valid": valid, "error": redact_optional(error)})
        if not valid and not backend_failed:
            self.chat_errors += 1

    def announce(self, text: str, *, to: list[str] | None = None, kind: str = "announce") -> None:
        """The host speaks (to everyone unless ``to``); it lands in the listeners' histories."""
        for name in to if to is not None else self.players:
            self.players[name].history.append({"role": "user", "content": f"host: {text}"})
        self.event("host", kind, text=text)

    def speak(self, speaker: str, raw: str, public: str | None, *, to: list[str] | None = None) -> None:
        """``speaker`` said ``raw`` (its own history keeps all of it, thoughts too); the listeners
        (everyone else unless ``to``) hear only ``public``."""
        self.players[speaker].history.append({"role": "assistant", "content": raw})
        if public is None:
            return
        for name in to if to is not None else self.players:
            if name != speaker:
                self.players[name].history.append({"role": "user", "content": f"{speaker}: {public}"})

    def end(self, reason: str, *, outcome: str | None = None, finished: bool = True) -> None:
        self.ended, self.end_reason, self.outcome, self.finished = True, reason, outcome, finished
        self._requests = None

    # -- what the stepper calls ------------------------------------------------------------------
    def pending(self) -> list[Move]:
        if self.ended:
            return []
        if self._requests is None:
            self._requests = self._next_requests()
        moves = []
        for request in self._requests:
            if request.player in self._collected:
                continue
            player = self.players[request.player]
            messages = [{"role": "user", "content": player.rules}, *player.history,
                        {"role": "user", "content": f"host: {request.instruction}"}]
            moves.append(Move(self, request.player, player.model, request.kind, merge_roles(messages),
                              move_seed(self.setup.seed, self.step, request.player), request.shape))
        return moves

    def resolve(self, replies: dict[str, Completion]) -> None:
        """The step's replies, by player. Failed ones are asked again next step (or end the game)."""
        self.step += 1
        requests = {r.player: r for r in self._requests or []}
        for name, completion in replies.items():
            self.prompt_tokens += completion.prompt_tokens
            self.completion_tokens += completion.completion_tokens
            self._spent[name] = (completion.prompt_tokens, completion.completion_tokens)
            if completion.engine:
                self.engines.add(completion.engine)
            if completion.ok:
                self.constrained_moves += completion.constraint is not None
                self._collected[name] = completion.text
                continue
            error = completion.error or "no text"
            self.backend_errors.append((name, error))
            self._attempts[name] = self._attempts.get(name, 0) + 1
            self.event(name, requests[name].kind, valid=False, error=f"backend: {error}", backend_failed=True)
            if self._attempts[name] > self.max_retries:
                self.end("backend_error", finished=False)  # no outcome: the cell failed, it is replayed
                return
        if self._requests is not None and all(r.player in self._collected for r in self._requests):
            done, collected = self._requests, self._collected
            self._requests, self._collected, self._attempts = None, {}, {}
            self._on_replies(done, collected)
        if not self.ended and self.step >= self.max_steps:
            self.end("step_limit", outcome=self.step_limit_outcome(), finished=False)

    def step_limit_outcome(self) -> str | None:
        """The outcome recorded when the game runs out of host steps (Ask-Guess calls it CE)."""
        return None

    def row(self, *, run_id: str) -> dict:
        s = self.setup
        return {"cell_key": s.cell_key, "game": s.game, "game_version": self.VERSION, "item_id": s.item_id,
                "item": s.item, "setting": s.setting, "trial": s.trial, "seed": s.seed,
                "assignment": list(s.assignment.items()), "outcome": self.outcome, "end_reason": self.end_reason,
                "finished": self.finished, "rounds": self.round, "spy_living_rounds": None,
                "chat_errors": self.chat_errors, "steps": self.step, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "transcript": self.transcript, "run_id": run_id,
                "created_at": now(), "backend_version": "; ".join(sorted(self.engines)) or None,
                "constrained_moves": self.constrained_moves, "move_prompt_tokens": self.move_prompt_tokens,
                "move_completion_tokens": self.move_completion_tokens, "move_flags": self.move_flags,
                "placeholder_moves": self.placeholder_moves, **self._result()}
