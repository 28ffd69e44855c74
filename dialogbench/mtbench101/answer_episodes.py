"""Answer MT-Bench-101 turns over the episode engine.

* ``golden`` context: every turn is an independent one-step episode (the dataset's turns before it,
  then its user message); all go in one backend call, or ``chunk_size`` at a time.
* ``self`` context: one episode per dialogue steps through the turn indices of the run (all
  dialogues together, so one backend call per turn index across all dialogues). A judged turn sees
  the model's own earlier answers (stored ones, or answered in this run); when one of them is
  missing (it failed), the turn is blocked and waits for the next run.

Over the context window a conversation loses its oldest (user, assistant) turns; the current user
message always stays. ``on_batch`` gets every backend call's (cell, completion) pairs before the
next call, so the caller writes rows as they come and a killed run keeps them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from dialogbench.backends.base import Backend, Completion, Sampling
from dialogbench.episodes import Fit, Progress, Reply, Request, Seat, run_episodes
from dialogbench.mtbench101.answer_cells import conversation, history
from dialogbench.mtbench101.scoring import is_judged

if TYPE_CHECKING:
    from dialogbench.mtbench101.answer_cells import AnswerCell
    from dialogbench.mtbench101.dataset import Dialogue

log = logging.getLogger("dialogbench.mtbench101.answer")
MODEL = "answerer"  # the one seat of an answer run
TURN_FIT = Fit(keep_head=0, keep_tail=1, unit=2)  # drop whole (user, assistant) turns, keep the question

Answered = list[tuple["AnswerCell", Completion]]


@dataclass
class AnswerStats:
    backend_calls: int = 0
    blocked: int = 0  # self context: turns waiting on an earlier answer that failed
    trimmed_prompts: int = 0


def turn_request(cell: "AnswerCell", pairs: list[tuple[str, str]]) -> Request:
    return Request(model=MODEL, messages=conversation(pairs, cell.dialogue.turns[cell.turn].user), fit=TURN_FIT,
                   tag=cell)


class GoldenTurn:
    """One turn in golden context: one request, done once answered (or failed)."""

    def __init__(self, cell: "AnswerCell") -> None:
        self.cell, self.done = cell, False

    def pending(self) -> list[Request]:
        return [] if self.done else [turn_request(self.cell, history(self.cell.dialogue, self.cell.turn, context="golden"))]

    def resolve(self, replies: list[Reply]) -> None:
        self.done = True


class OwnAnswers:
    """One dialogue in self context. Step k is turn index ``turns[k]`` (the run's turn indices, shared
    by every dialogue); the episode asks only when it has a cell at that turn and every earlier
    judged answer is ``known`` (cell key → answer, shared, grows as answers come)."""

    def __init__(self, cells: Sequence["AnswerCell"], *, turns: Sequence[int], known: dict[str, str],
                 earlier_key: Callable[["Dialogue", int], str], stats: AnswerStats) -> None:
        self.by_turn = {c.turn: c for c in cells}
        self.turns, self.known, self.earlier_key, self.stats = list(turns), known, earlier_key, stats
        self.last = max(self.turns.index(c.turn) for c in cells)
        self.at, self.prepared_at, self.request = 0, -1, None

    @property
    def done(self) -> bool:
        return self.at > self.last

    def pending(self) -> list[Request]:
        if self.done:
            return []
        if self.prepared_at != self.at:
            self.prepared_at, self.request = self.at, self._request(self.by_turn.get(self.turns[self.at]))
        return [self.request] if self.request else []

    def _request(self, cell: "AnswerCell | None") -> Request | None:
        if cell is None:
            return None
        dialogue, turn = cell.dialogue, cell.turn
        earlier = {i: self.known.get(self.earlier_key(dialogue, i)) for i in range(turn)
                   if is_judged(task=dialogue.task, turn=i)}
        if any(a is None for a in earlier.values()):
            self.stats.blocked += 1  # an earlier answer failed: this turn waits for the next run
            return None
        return turn_request(cell, history(dialogue, turn, context="self", answers=earlier))

    def resolve(self, replies: list[Reply]) -> None:
        for reply in replies:
            if reply.completion.ok:
                self.known[reply.request.tag.cell_key] = reply.completion.text
        self.at += 1


def answer_cells(cells: Sequence["AnswerCell"], *, context: str, backend: Backend, sampling: Sampling,
                 context_window: int, on_batch: Callable[[Answered], None],
                 stored: Mapping[str, str] | None = None,
                 earlier_key: Callable[["Dialogue", int], str] | None = None,
                 chunk_size: int | None = None) -> AnswerStats:
    """Answer ``cells`` (dialogue then turn order) in ``context`` ("golden" or "self").

    Self context needs ``earlier_key(dialogue, turn)``, the cell key of an earlier turn's answer, and
    ``stored``, the answers already in the lake by cell key. ``chunk_size`` caps a golden call."""
    stats = AnswerStats()
    if not cells:
        return stats
    seat = Seat(backend=backend, sampling=sampling, prompt_budget=context_window - sampling.max_tokens)
    if context == "golden":
        episodes, concurrency = [GoldenTurn(c) for c in cells], chunk_size or None
    elif context == "self":
        if earlier_key is None:
            raise ValueError("self context needs earlier_key")
        known, turns = dict(stored or {}), sorted({c.turn for c in cells})
        dialogues: dict[int, list[AnswerCell]] = {}
        for cell in cells:
            dialogues.setdefault(id(cell.dialogue), []).append(cell)
        episodes = [OwnAnswers(group, turns=turns, known=known, earlier_key=earlier_key, stats=stats)
                    for group in dialogues.values()]
        concurrency = None
    else:
        raise ValueError(f"unknown context mode {context!r}")
    run = run_episodes(episodes, seats={MODEL: seat}, concurrency=concurrency,
                       on_call=lambda _model, replies: on_batch([(r.request.tag, r.completion) for r in replies]),
                       progress=Progress(log, noun="episodes"))
    stats.backend_calls, stats.trimmed_prompts = run.backend_calls, run.trimmed_prompts
    return stats
