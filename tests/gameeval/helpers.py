"""Drive a game's state machine directly: a ``responder(move) -> text | None`` plays every seat
(None: the backend failed that move)."""

from __future__ import annotations

from typing import Callable

from dialogbench.backends.base import Completion
from dialogbench.gameeval.game import Game, GameSetup, Move


def setup(game: str, *, item: str = "", setting: str = "default", trial: int = 0, seed: int = 7,
          assignment: dict[str, str]) -> GameSetup:
    return GameSetup(cell_key=f"key-{game}-{item}-{trial}", game=game, item_id=f"{item}/{trial}", item=item,
                     setting=setting, trial=trial, seed=seed, assignment=assignment)


def drive(game: Game, responder: Callable[[Move], str | None], *, max_steps: int = 500) -> list[list[Move]]:
    """Run the game to its end; returns the moves of every step."""
    steps = []
    while not game.ended:
        moves = game.pending()
        assert moves, "a game that has not ended must wait for a move"
        steps.append(moves)
        replies = {}
        for move in moves:
            text = responder(move)
            replies[move.player] = Completion(text=text, completion_tokens=1) if text is not None else \
                Completion(text=None, error="boom")
        game.resolve(replies)
        assert len(steps) < max_steps, "game does not end"
    return steps
