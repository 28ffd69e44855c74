"""Backends behind one interface; ``get_backend`` builds (and reuses) the one a model config names."""

from __future__ import annotations

import threading

from dialogbench.backends.base import Backend, BackendError, BatchStats, Completion, Conversation, Sampling
from dialogbench.backends.metering import Metered
from dialogbench.run.config import ModelConfig
from dialogbench.cells.keys import fingerprint

__all__ = ["Backend", "BackendError", "BatchStats", "Completion", "Conversation", "Sampling",
           "get_backend", "sampling_for", "clear_backends", "release_except"]

_cache: dict[str, Backend] = {}
_lock = threading.Lock()


def _build(model: ModelConfig) -> Backend:
    if model.backend == "transformers":
        from dialogbench.backends.transformers_backend import TransformersBackend
        return TransformersBackend(model)
    if model.backend == "vllm":
        from dialogbench.backends.vllm_backend import VLLMBackend
        return VLLMBackend(model)
    if model.backend == "openai":
        from dialogbench.backends.openai_backend import OpenAIBackend
        return OpenAIBackend(model)
    if model.backend == "scripted":
        from dialogbench.backends.scripted import ScriptedBackend
        return ScriptedBackend(model)
    raise BackendError(f"model {model.name!r}: unknown backend {model.backend!r}")


def get_backend(model: ModelConfig) -> Backend:
    """One backend per model config per process: weights load once and serve every stage. Its calls are metered
    (``metering``: what a chunk's calls cost, recorded in ``backend_calls``)."""
    key = fingerprint(model.model_dump())
    with _lock:
        if key not in _cache:
            _cache[key] = _build(model)
        return Metered(_cache[key], model)


def clear_backends() -> None:
    """Close every backend this process built (their engines stop when nobody else uses them)."""
    with _lock:
        backends = list(_cache.values())
        _cache.clear()
    for backend in backends:
        close = getattr(backend, "close", None)
        if close is not None:
            close()


def _engine_key(model: ModelConfig) -> str | None:
    """``engines``' key for the engine ``model``'s backend would acquire, found without loading it (a built backend
    has it as ``engine_key``); None for a backend that holds no engine (an endpoint, a script), or when it cannot be
    told (missing weights: the stage that builds the backend reports that, located)."""
    if model.backend == "vllm":
        from dialogbench.backends.vllm_backend import engine_spec
    elif model.backend == "transformers":
        from dialogbench.backends.transformers_backend import engine_spec
    else:
        return None
    try:
        return fingerprint(engine_spec(model))
    except BackendError:
        return None


def release_except(keep: list[ModelConfig]) -> list[str]:
    """Close every backend built for a model config not in ``keep``; returns their model names. An
    engine that a kept model shares stays loaded (``engines`` counts its users): a kept model whose backend is not
    built yet but would use the engine of one closed here (a chatbot's weights, then the judge on the same weights)
    gets its backend first, so the engine is handed over rather than stopped and loaded again."""
    kept = {fingerprint(m.model_dump()) for m in keep}
    with _lock:
        dropped = {k: b for k, b in _cache.items() if k not in kept}
        built = set(_cache)
    held = {key for b in dropped.values() if (key := getattr(b, "engine_key", None)) is not None}  # as acquired
    for model in keep:
        if held and fingerprint(model.model_dump()) not in built and _engine_key(model) in held:
            get_backend(model)
    with _lock:
        for key in dropped:
            _cache.pop(key, None)
    for backend in dropped.values():
        close = getattr(backend, "close", None)
        if close is not None:
            close()
    return sorted(b.model.name for b in dropped.values())


def sampling_for(model: ModelConfig) -> Sampling:
    return Sampling(temperature=model.sampling.temperature, top_p=model.sampling.top_p,
                    max_tokens=model.max_tokens, seed=model.sampling.seed)
