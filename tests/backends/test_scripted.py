"""The scripted backend's pauses (tests and benchmarks stand it in for an engine's time)."""

from __future__ import annotations

import time

from dialogbench.backends.base import Sampling
from dialogbench.backends.scripted import ScriptedBackend
from dialogbench.run.config import ModelConfig


def test_a_call_pauses_per_call_and_per_conversation_in_it():
    model = ModelConfig(name="s", backend="scripted", script=["hi"], script_delay_s=0.05,
                        script_delay_per_conversation_s=0.1)
    backend = ScriptedBackend(model)
    conversations = [[{"role": "user", "content": "x"}]] * 3
    start = time.perf_counter()
    replies = backend.generate(conversations, sampling=Sampling(temperature=0.0))
    assert time.perf_counter() - start >= 0.05 + 3 * 0.1  # a lower bound: a sleep never ends early
    assert [r.text for r in replies] == ["hi"] * 3
