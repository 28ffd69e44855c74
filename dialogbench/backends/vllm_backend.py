"""vLLM offline engine: the whole batch goes to one ``LLM.chat`` call (vLLM schedules it itself)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

from dialogbench.backends.base import BackendError, BatchStats, Completion, Conversation, Sampling, check_seeds
from dialogbench.backends.chat_format import adapt_conversation, probe_template
from dialogbench.backends.weights import resolve_weights
from dialogbench.config import ModelConfig

_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model")


def _engine_kwargs(model: ModelConfig) -> dict[str, Any]:
    """``LLM(...)`` arguments: resolved weights, revision, seed, then ``model.engine`` (which wins).

    A GGUF file is passed as the file itself (vLLM loads single-file GGUF); its tokenizer is
    ``engine.tokenizer`` when given, else the GGUF's directory when that holds tokenizer files
    (vLLM's docs advise the base model's tokenizer over the one embedded in the GGUF)."""
    try:
        resolved = resolve_weights(model.weights or "", must_exist=False)
    except FileNotFoundError as exc:
        raise BackendError(f"model {model.name!r}: weights: {exc}") from None
    kwargs: dict[str, Any] = {"model": resolved.path, "revision": model.revision}
    if resolved.gguf_file is not None:
        directory = Path(resolved.path)
        kwargs["model"] = str(directory / resolved.gguf_file)
        if any((directory / name).exists() for name in _TOKENIZER_FILES):
            kwargs["tokenizer"] = str(directory)
    if model.sampling.seed is not None:
        kwargs["seed"] = model.sampling.seed
    return {**kwargs, **model.engine}


def _token_ids(encoded: Any) -> list[int]:
    """``apply_chat_template(tokenize=True)`` gives a list, or a mapping with ``input_ids``."""
    return list(encoded["input_ids"] if isinstance(encoded, Mapping) else encoded)


class VLLMBackend:
    def __init__(self, model: ModelConfig) -> None:
        try:
            import vllm
        except ImportError as exc:
            raise BackendError(f"model {model.name!r}: backend 'vllm' needs vLLM; install it with "
                               f"pip install '.[vllm]' ({exc})") from None
        self.model = model
        self.stats = BatchStats()
        self._vllm = vllm
        self.llm = vllm.LLM(**_engine_kwargs(model))
        self.tokenizer = self.llm.get_tokenizer()
        template = model.chat_template
        system, leading = template.system, template.leading_assistant
        # ``auto``: ask the model's own chat template what it accepts (probed once, here).
        probed = probe_template(self._render) if "auto" in (system, leading) else (True, True)
        self._system_native = probed[0] if system == "auto" else system == "native"
        self._leading_native = probed[1] if leading == "auto" else leading == "native"

    def close(self) -> None:
        """Free the engine's GPU memory so the next model can load (one model at a time per GPU)."""
        import gc

        self.llm = self.tokenizer = None
        gc.collect()
        try:
            import torch
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
        except ImportError:
            pass

    def _render(self, conversation: Conversation) -> str:
        return self.tokenizer.apply_chat_template(conversation, tokenize=False, add_generation_prompt=True)

    def _adapt(self, conversation: Conversation) -> Conversation:
        return adapt_conversation(conversation, system_native=self._system_native,
                                  leading_assistant_native=self._leading_native,
                                  filler=self.model.chat_template.filler)

    def count_tokens(self, conversation: Conversation) -> int:
        encoded = self.tokenizer.apply_chat_template(self._adapt(conversation), tokenize=True,
                                                     add_generation_prompt=True)
        return len(_token_ids(encoded))

    def _params(self, sampling: Sampling) -> Any:
        return self._vllm.SamplingParams(temperature=sampling.temperature, top_p=sampling.top_p,
                                         max_tokens=sampling.max_tokens, seed=sampling.seed)

    def generate(self, conversations: Sequence[Conversation], *, sampling: Sampling,
                 seeds: Sequence[int] | None = None) -> list[Completion]:
        """With ``seeds``, ``LLM.chat`` gets one ``SamplingParams`` per conversation (vLLM pairs a list
        with the prompts one by one), each with its own per-request ``seed``."""
        seeds = check_seeds(conversations, seeds)
        start = time.perf_counter()
        if seeds is None:
            params = self._params(sampling)
        else:
            params = [self._params(replace(sampling, seed=s)) for s in seeds]
        batch = [self._adapt(c) for c in conversations]
        try:
            outputs = self.llm.chat(batch, params, use_tqdm=False) if batch else []
            results = [Completion(text=out.outputs[0].text, prompt_tokens=len(out.prompt_token_ids or []),
                                  completion_tokens=len(out.outputs[0].token_ids))
                       for out in outputs]
            if len(results) != len(batch):
                raise RuntimeError(f"vLLM returned {len(results)} outputs for {len(batch)} conversations")
        except Exception as exc:  # the engine failed the whole batch: every item carries the error
            error = f"vllm: {type(exc).__name__}: {exc}"
            results = [Completion(text=None, error=error) for _ in batch]
        self.stats.record(results, seconds=time.perf_counter() - start)
        return results
