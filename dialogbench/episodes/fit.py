"""The one context fitter: drop the oldest droppable messages until a prompt fits its token budget."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from dialogbench.backends.base import Message


@dataclass(frozen=True)
class Fit:
    """How a prompt may be cut. The first ``keep_head`` messages (system prompt, rules) and the last
    ``keep_tail`` ones (the message to answer) are never dropped; the messages between them go
    oldest first, ``unit`` at a time (2: a whole (user, assistant) turn); ``rebuild`` runs after each
    drop (e.g. re-merging consecutive messages of one role)."""

    keep_head: int = 0
    keep_tail: int = 1
    unit: int = 1
    rebuild: Callable[[list[Message]], list[Message]] | None = None

    def __post_init__(self) -> None:
        if self.keep_head < 0 or self.keep_tail < 0 or self.unit < 1:
            raise ValueError(f"bad fit: keep_head={self.keep_head}, keep_tail={self.keep_tail}, unit={self.unit}")


def fit_prompt(messages: list[Message], *, fit: Fit, count_tokens: Callable[[list[Message]], int],
               budget: int) -> tuple[list[Message], int]:
    """``messages`` with the oldest droppable ones removed until ``count_tokens`` fits ``budget``
    (or nothing droppable is left); returns the prompt and how many drops it took."""
    drops = 0
    while len(messages) - fit.keep_head - fit.keep_tail >= fit.unit and count_tokens(messages) > budget:
        messages = [*messages[:fit.keep_head], *messages[fit.keep_head + fit.unit:]]
        if fit.rebuild is not None:
            messages = fit.rebuild(messages)
        drops += 1
    return messages, drops
