"""Batched stepping: every step sends each model ONE batch holding every pending move of every game
in flight (a game between two models makes two batches a step), then hands the replies back.

Games in flight are capped at ``concurrency``; a finished game's slot goes to the next queued game at
once, so batches stay full. Finished games go to ``on_done`` after the step they ended in (the stage
writes them), so a killed run keeps them; games still in flight are replayed from the start next time.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable

from dialogbench.backends.base import Backend, Message, Sampling
from dialogbench.gameeval.game import Game, Move, merge_roles

log = logging.getLogger("dialogbench.gameeval")


@dataclass
class Seat:
    """How one model plays: its backend, the sampling of its moves, the prompt budget in tokens."""

    backend: Backend
    sampling: Sampling
    prompt_budget: int


@dataclass
class PlayStats:
    steps: int = 0
    backend_calls: int = 0
    moves: int = 0
    trimmed_prompts: int = 0
    games: int = 0
    batch_sizes: list[int] = field(default_factory=list)


def fit(messages: list[Message], *, count_tokens: Callable[[list[Message]], int], budget: int) -> tuple[list[Message], bool]:
    """Drop the oldest history messages (never the rules, never the host's instruction) until the
    prompt fits ``budget`` tokens; returns the prompt and whether anything was dropped."""
    trimmed = False
    while len(messages) > 2 and count_tokens(messages) > budget:
        messages = merge_roles([messages[0], *messages[2:]])
        trimmed = True
    return messages, trimmed


def play(games: Iterable[Game], *, seats: dict[str, Seat], concurrency: int,
         on_done: Callable[[list[Game]], None], progress_every_s: float = 30.0) -> PlayStats:
    queue, active, stats = iter(games), [], PlayStats()
    last_log = time.monotonic()

    def refill() -> None:
        while len(active) < concurrency:
            game = next(queue, None)
            if game is None:
                return
            active.append(game)

    refill()
    while active:
        moves: dict[str, list[Move]] = defaultdict(list)
        for game in active:
            pending = game.pending()
            if not pending and not game.ended:  # a host bug must not spin forever
                game.end("no_moves", finished=False)
            for move in pending:
                moves[move.model].append(move)
        replies: dict[int, dict] = defaultdict(dict)
        for model, batch in moves.items():
            seat = seats[model]
            prompts = [m.messages for m in batch]
            for k, tokens in enumerate(seat.backend.count_tokens_many(prompts)):  # one batched count
                if tokens > seat.prompt_budget:
                    prompts[k], trimmed = fit(prompts[k], count_tokens=seat.backend.count_tokens,
                                              budget=seat.prompt_budget)
                    stats.trimmed_prompts += trimmed
            formats = [m.shape.output_format(max_tokens=seat.sampling.max_tokens) if m.shape else None for m in batch]
            completions = seat.backend.generate(prompts, sampling=seat.sampling, seeds=[m.seed for m in batch],
                                                formats=formats)
            stats.backend_calls += 1
            stats.moves += len(batch)
            stats.batch_sizes.append(len(batch))
            for move, completion in zip(batch, completions):
                replies[id(move.game)][move.player] = completion
        for game in active:
            if id(game) in replies:
                game.resolve(replies[id(game)])
        stats.steps += 1
        done = [g for g in active if g.ended]
        if done:
            active[:] = [g for g in active if not g.ended]
            stats.games += len(done)
            on_done(done)
        refill()
        if time.monotonic() - last_log > progress_every_s:
            last_log = time.monotonic()
            log.info("step %d: %d games done, %d in flight, %d moves in %d backend calls",
                     stats.steps, stats.games, len(active), stats.moves, stats.backend_calls)
    return stats
