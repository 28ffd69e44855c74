"""Algorithm 1, batched, over the episode engine: every unfinished dialogue advances by one utterance
per step, all of them in one backend call."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Callable, Sequence

from dialogbench.backends.base import Backend, Conversation, Sampling
from dialogbench.episodes import Fit, Progress, Reply, Request, Seat, run_episodes

log = logging.getLogger("dialogbench.botchat.generation")
MODEL = "chatbot"  # the one seat of a generation run


@dataclass
class DialogueState:
    """One dialogue being generated. ``utterances`` starts as the ChatSEED (or a stored prefix)."""

    key: str
    utterances: list[str]
    n_target: int
    completion_tokens: list[int] = field(default_factory=list)
    prompt_tokens: list[int | None] = field(default_factory=list)  # per generated utterance; None: not kept (a prefix
                                                                   # stored before prompt tokens were)
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


def dialogue_fit(system_prompt: str | None) -> Fit:
    """Over the context window a dialogue loses its oldest utterances; the system prompt and the
    newest utterance stay. Roles count backwards from the newest, so dropping from the front leaves
    every kept role as it was."""
    return Fit(keep_head=1 if system_prompt else 0, keep_tail=1, unit=1)


class DialogueEpisode:
    """A ``DialogueState`` as an episode: one request a step, its reply appended (or its error kept)."""

    def __init__(self, state: DialogueState, *, system_prompt: str | None) -> None:
        self.state, self.system_prompt, self.fit = state, system_prompt, dialogue_fit(system_prompt)

    @property
    def done(self) -> bool:
        return self.state.done

    def pending(self) -> list[Request]:
        if self.state.done:
            return []
        return [Request(model=MODEL, messages=build_messages(self.state.utterances, self.system_prompt), fit=self.fit)]

    def resolve(self, replies: list[Reply]) -> None:
        state = self.state
        for reply in replies:
            state.trimmed_steps += reply.trimmed
            completion = reply.completion
            if not completion.ok:
                state.error = f"utterance {len(state.utterances) + 1}: {completion.error}"
                continue
            text = completion.text.strip()
            state.empty_utterances += not text
            state.utterances.append(text)
            state.completion_tokens.append(completion.completion_tokens)
            state.prompt_tokens.append(completion.prompt_tokens)
            if completion.engine:
                state.engines.add(completion.engine)


def generate_dialogues(states: Sequence[DialogueState], *, backend: Backend, sampling: Sampling,
                       system_prompt: str | None, context_window: int,
                       on_step: Callable[[int, Sequence[DialogueState]], None] | None = None) -> None:
    """Run steps until every dialogue reached its target or failed; ``on_step`` sees progress
    after each call (the pipeline checkpoints there)."""
    seat = Seat(backend=backend, sampling=sampling, prompt_budget=context_window - sampling.max_tokens)
    run_episodes([DialogueEpisode(s, system_prompt=system_prompt) for s in states if not s.done],
                 seats={MODEL: seat}, on_step=(lambda stats: on_step(stats.steps, states)) if on_step else None,
                 progress=Progress(log, noun="dialogues"))
