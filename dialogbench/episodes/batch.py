"""One backend call: a model's requests, counted in one batch, the over-budget ones fitted, generated."""

from __future__ import annotations

from typing import Sequence

from dialogbench.episodes.fit import fit_prompt
from dialogbench.episodes.protocol import Reply, Request, Seat


def send(seat: Seat, requests: Sequence[Request]) -> list[Reply]:
    """Generate every request in one ``seat.backend.generate`` call. Tokens are counted in one
    batched ``count_tokens_many`` (local backends keep the ids for the generate that follows); only
    prompts over ``seat.prompt_budget`` are fitted. ``seeds`` and ``formats`` go as one entry per
    request, and only when some request sets one (free-text, unseeded batches omit them)."""
    backend = seat.backend
    prompts = [r.messages for r in requests]
    trimmed = [False] * len(requests)
    for k, tokens in enumerate(backend.count_tokens_many(prompts)):
        if tokens > seat.prompt_budget:
            prompts[k], drops = fit_prompt(prompts[k], fit=requests[k].fit, count_tokens=backend.count_tokens,
                                           budget=seat.prompt_budget)
            trimmed[k] = drops > 0
    per_request = {}  # only what some request uses, so a plain call stays ``generate(prompts, sampling=...)``
    if any(r.seed is not None for r in requests):
        per_request["seeds"] = [r.seed for r in requests]
    if any(r.output_format is not None for r in requests):
        per_request["formats"] = [r.output_format for r in requests]
    completions = backend.generate(prompts, sampling=seat.sampling, **per_request)
    if len(completions) != len(requests):
        raise RuntimeError(f"backend returned {len(completions)} completions for {len(requests)} prompts")
    return [Reply(r, c, p, t) for r, c, p, t in zip(requests, completions, prompts, trimmed)]
