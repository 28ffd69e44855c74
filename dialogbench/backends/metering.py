"""What every backend call costs, recorded where the stage ran it: each ``generate`` call of a backend handed out by
``get_backend`` is one entry (the model, conversations, failed ones, tokens, wall seconds, the price when the model's
config has one) in the ledger of the chunk being computed, and the runner writes each chunk's ledger to the
``backend_calls`` table (``usage`` sums it per run, model and role). A call made outside a chunk (a benchmark, a test
calling a backend directly) is not recorded."""

from __future__ import annotations

import contextlib
import time
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from dialogbench.run import stopping
from dialogbench.backends.base import Completion


@dataclass
class Ledger:
    """The calls of one chunk of ``stage`` in ``run_id``, its models playing ``role`` (chatbot, judge, player)."""

    run_id: str
    stage: str
    role: str
    calls: list[dict] = field(default_factory=list)


_ledger: ContextVar[Ledger | None] = ContextVar("dialogbench_ledger", default=None)


@contextlib.contextmanager
def collect(*, run_id: str, stage: str, role: str) -> Iterator[Ledger]:
    """Record the backend calls made inside the block (in this thread or task) in the ledger it yields."""
    ledger = Ledger(run_id, stage, role)
    token = _ledger.set(ledger)
    try:
        yield ledger
    finally:
        _ledger.reset(token)


def cost(model, prompt_tokens: int, completion_tokens: int) -> float | None:
    """The call's price from the model's ``prices`` (per million tokens), None when it has none."""
    prices = getattr(model, "prices", None)
    if prices is None:
        return None
    return (prompt_tokens * prices.prompt_per_million + completion_tokens * prices.completion_per_million) / 1e6


def record(model, results: Sequence[Completion], *, seconds: float, started_at) -> None:
    ledger = _ledger.get()
    if ledger is None:
        return
    prompt = sum(r.prompt_tokens or 0 for r in results)
    completion = sum(r.completion_tokens or 0 for r in results)
    ledger.calls.append({"run_id": ledger.run_id, "stage": ledger.stage, "role": ledger.role, "model": model.name,
                         "backend": model.backend, "conversations": len(results),
                         "failed": sum(not r.ok for r in results), "prompt_tokens": prompt,
                         "completion_tokens": completion, "seconds": seconds, "cost": cost(model, prompt, completion),
                         "started_at": started_at})


class Metered:
    """A backend whose ``generate`` calls go to the current ledger; everything else is the backend's. Each call is
    known to a run's stop (``dialogbench.run.stopping``): none starts after the stop's deadline, and a call that fails
    while the run stops raises ``Stopped`` instead of failing its cells (a Ctrl-C reaches an engine's processes too,
    and killing them is how the deadline ends a call that cannot be abandoned): the next run computes them."""

    def __init__(self, backend: Any, model) -> None:
        self._backend, self._model = backend, model

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)

    def generate(self, conversations, **kwargs) -> list[Completion]:
        from dialogbench.run.runs import now

        started, start = now(), time.perf_counter()
        with stopping.backend_call(abandonable=getattr(self._backend, "abandonable", False)):
            try:
                results = self._backend.generate(conversations, **kwargs)
            except Exception:
                if stopping.requested():
                    raise stopping.Stopped() from None
                raise
        if stopping.requested() and any(not r.ok for r in results):
            raise stopping.Stopped()
        record(self._model, results, seconds=time.perf_counter() - start, started_at=started)
        return results
