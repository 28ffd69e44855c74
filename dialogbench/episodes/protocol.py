"""What an episode is: something that asks models for replies, step by step, until it is done."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from dialogbench.backends.base import Backend, Completion, Message, Sampling
from dialogbench.episodes.fit import Fit

if TYPE_CHECKING:
    from dialogbench.backends.formats import OutputFormat


@dataclass
class Seat:
    """How one model is served: its backend, the sampling of its replies, the prompt budget in tokens
    (the context window less the reply's ``max_tokens``)."""

    backend: Backend
    sampling: Sampling
    prompt_budget: int


@dataclass
class Request:
    """One reply an episode waits for: ``messages`` to ``model``, with its own ``seed`` and
    ``output_format`` (None: the sampling's seed, free text), cut by ``fit`` when over budget.
    ``tag`` is the episode's own handle (a move, a cell); the stepper never reads it."""

    model: str
    messages: list[Message]
    seed: int | None = None
    output_format: "OutputFormat | None" = None
    fit: Fit = Fit()
    tag: Any = None


@dataclass
class Reply:
    """A request's completion; ``messages`` is the prompt as sent, ``trimmed`` whether it was cut."""

    request: Request
    completion: Completion
    messages: list[Message]
    trimmed: bool


class Episode(Protocol):
    """A dialogue, a game, a conversation being answered. Each step the stepper takes ``pending()``
    (possibly none: the episode waits out this step), sends it with every other episode's, then calls
    ``resolve()`` with this episode's replies (in the order they came back: by model, then request).
    An episode that is not ``done`` must get closer to it with each ``resolve``."""

    @property
    def done(self) -> bool: ...

    def pending(self) -> list[Request]: ...

    def resolve(self, replies: list[Reply]) -> None: ...
