"""Algorithm 1, batched: advance every unfinished dialogue of one model by one utterance per call."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from dialogbench.backends.base import Backend, Conversation, Sampling


@dataclass
class DialogueState:
    """One dialogue being generated. ``utterances`` starts as the ChatSEED (or a stored prefix)."""

    key: str
    utterances: list[str]
    n_target: int
    completion_tokens: list[int] = field(default_factory=list)
    empty_utterances: int = 0
    trimmed_steps: int = 0  # steps whose history was cut to fit the context window
    error: str | None = None
    engines: set[str] = field(default_factory=set)  # engine versions that wrote its utterances

    @property
    def done(self) -> bool:
        return self.error is not None or len(self.utterances) >= self.n_target


def build_messages(utterances: Sequence[str], system_prompt: str | None) -> Conversation:
    """Roles alternate backwards from the newest utterance, which is always the ``user`` message."""
    last = len(utterances) - 1
    messages = [{"role": "user" if (last - i) % 2 == 0 else "assistant", "content": text}
                for i, text in enumerate(utterances)]
    return ([{"role": "system", "content": system_prompt}] if system_prompt else []) + messages


def fit_context(utterances: Sequence[str], *, system_prompt: str | None, count_tokens: Callable[[Conversation], int],
                budget: int) -> tuple[Conversation, bool]:
    """Drop the oldest utterances until the prompt fits ``budget`` tokens (the newest one always stays)."""
    start = 0
    messages = build_messages(utterances, system_prompt)
    while start < len(utterances) - 1 and count_tokens(messages) > budget:
        start += 1
        messages = build_messages(utterances[start:], system_prompt)
    return messages, start > 0


def fit_contexts(histories: Sequence[Sequence[str]], *, system_prompt: str | None, backend: Backend,
                 budget: int) -> list[tuple[Conversation, bool]]:
    """``fit_context`` for a batch: every prompt is counted in one batched call (the backend keeps
    the token ids for the ``generate`` that follows); only the few over ``budget`` are cut."""
    prompts = [build_messages(u, system_prompt) for u in histories]
    fitted = []
    for utterances, messages, tokens in zip(histories, prompts, backend.count_tokens_many(prompts)):
        if tokens <= budget:
            fitted.append((messages, False))
        else:
            fitted.append(fit_context(utterances, system_prompt=system_prompt, count_tokens=backend.count_tokens,
                                      budget=budget))
    return fitted


def step_dialogues(states: Sequence[DialogueState], *, backend: Backend, sampling: Sampling, system_prompt: str | None,
                   context_window: int) -> int:
    """One backend call that appends one utterance to every unfinished dialogue; returns how many."""
    active = [s for s in states if not s.done]
    if not active:
        return 0
    fitted = fit_contexts([s.utterances for s in active], system_prompt=system_prompt, backend=backend,
                          budget=context_window - sampling.max_tokens)
    for state, (_, trimmed) in zip(active, fitted):
        state.trimmed_steps += trimmed
    for state, completion in zip(active, backend.generate([m for m, _ in fitted], sampling=sampling)):
        if not completion.ok:
            state.error = f"utterance {len(state.utterances) + 1}: {completion.error}"
            continue
        text = completion.text.strip()
        state.empty_utterances += not text
        state.utterances.append(text)
        state.completion_tokens.append(completion.completion_tokens)
        if completion.engine:
            state.engines.add(completion.engine)
    return len(active)


def generate_dialogues(states: Sequence[DialogueState], *, backend: Backend, sampling: Sampling,
                       system_prompt: str | None, context_window: int,
                       on_step: Callable[[int, Sequence[DialogueState]], None] | None = None) -> None:
    """Run steps until every dialogue reached its target or failed; ``on_step`` sees progress
    after each call (the pipeline checkpoints there)."""
    step = 0
    while any(not s.done for s in states):
        step_dialogues(states, backend=backend, sampling=sampling, system_prompt=system_prompt,
                       context_window=context_window)
        step += 1
        if on_step:
            on_step(step, states)
