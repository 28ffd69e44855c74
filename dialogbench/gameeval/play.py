"""Batched play over the episode engine: every step sends each model ONE batch holding every pending
move of every game in flight (a game between two models makes two batches a step), then hands the
replies back.

Games in flight are capped at ``concurrency``; a finished game's slot goes to the next queued game at
once, so batches stay full. Finished games go to ``on_done`` after the step they ended in (the stage
writes them), so a killed run keeps them; games still in flight are replayed from the start next time.
"""

from __future__ import annotations

import logging

from typing import Callable, Iterable, Mapping

from dialogbench.episodes import Fit, Progress, Reply, Request, Seat, run_episodes
from dialogbench.episodes.stepper import RunStats
from dialogbench.gameeval.game import Game, merge_roles

log = logging.getLogger("dialogbench.gameeval")

__all__ = ["GameEpisode", "Seat", "play", "MOVE_FIT"]

# Over budget a move loses the oldest history messages, never the rules (first) nor the host's
# instruction (last); roles are merged again after each drop.
MOVE_FIT = Fit(keep_head=1, keep_tail=1, unit=1, rebuild=merge_roles)



class GameEpisode:
    """A ``Game`` (the state machine) as an episode: its pending moves are the requests."""

    def __init__(self, game: Game, *, seats: Mapping[str, Seat]) -> None:
        self.game, self.seats = game, seats

    @property
    def done(self) -> bool:
        return self.game.ended

    def pending(self) -> list[Request]:
        game = self.game
        moves = game.pending()
        if not moves and not game.ended:  # a host bug must not spin forever
            game.end("no_moves", finished=False)
        return [Request(model=m.model, messages=m.messages, seed=m.seed, fit=MOVE_FIT, tag=m,
                        output_format=m.shape.output_format(max_tokens=self.seats[m.model].sampling.max_tokens)
                        if m.shape else None)
                for m in moves]

    def resolve(self, replies: list[Reply]) -> None:
        if replies:
            self.game.resolve({r.request.tag.player: r.completion for r in replies})


def play(games: Iterable[Game], *, seats: dict[str, Seat], concurrency: int,
         on_done: Callable[[list[Game]], None], progress_every_s: float = 30.0) -> RunStats:
    """Play ``games`` batched; the stepper's counts (steps, backend calls, moves, trimmed prompts, games finished)."""
    return run_episodes((GameEpisode(g, seats=seats) for g in games), seats=seats, concurrency=concurrency,
                        on_done=lambda done: on_done([e.game for e in done]),
                        progress=Progress(log, every_s=progress_every_s, noun="games"))
