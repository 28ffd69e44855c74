"""A deterministic backend for tests only: replies come from the config's ``script``, cycled.

Special replies: ``!error:MSG`` makes that conversation fail with MSG; ``{n}`` is replaced by
the number of non-system messages it was given (handy to see what a step received).
``script_delay_s`` pauses each call (to kill or stop a run mid-stage in tests), ``script_delay_per_conversation_s``
more for each conversation in it; a stop's deadline cuts the pause short (the call is abandoned: ``abandonable``).
Never a default, never presented as a model under test.
"""

from __future__ import annotations

import itertools
import time
from typing import Sequence

from dialogbench.run import stopping
from dialogbench.backends.base import BatchStats, Completion, Conversation, Sampling, check_seeds
from dialogbench.backends.formats import per_conversation
from dialogbench.run.config import ModelConfig


class ScriptedBackend:
    abandonable = True  # its pause ends at a stop's deadline (dialogbench.run.stopping)

    def __init__(self, model: ModelConfig) -> None:
        self.model = model
        self._replies = itertools.cycle(model.script or [""])
        self.stats = BatchStats()
        self.version = "scripted"

    def count_tokens_many(self, conversations: Sequence[Conversation]) -> list[int]:
        return [self.count_tokens(c) for c in conversations]

    def count_tokens(self, conversation: Conversation) -> int:
        return sum(len(m["content"].split()) + 4 for m in conversation)

    def generate(self, conversations: Sequence[Conversation], *, sampling: Sampling,
                 seeds: Sequence[int] | None = None, formats=None) -> list[Completion]:
        """``seeds`` and ``formats`` are checked, then ignored: scripted replies are what the script says."""
        check_seeds(conversations, seeds)
        per_conversation(formats, len(conversations))
        start = time.perf_counter()
        stopping.sleep(self.model.script_delay_s + self.model.script_delay_per_conversation_s * len(conversations))
        results = []
        for conversation in conversations:
            reply = next(self._replies)
            prompt_tokens = self.count_tokens(conversation)
            if reply.startswith("!error:"):
                results.append(Completion(text=None, prompt_tokens=prompt_tokens, error=reply[len("!error:"):]))
                continue
            text = reply.replace("{n}", str(sum(m["role"] != "system" for m in conversation)))
            words = text.split()[: sampling.max_tokens]
            text = " ".join(words) if len(text.split()) > sampling.max_tokens else text
            results.append(Completion(text=text, prompt_tokens=prompt_tokens, completion_tokens=len(words),
                                      engine=self.version))
        self.stats.record(results, seconds=time.perf_counter() - start)
        return results
