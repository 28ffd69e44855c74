"""Loaded engines shared by the model configs that name the same weights and engine settings.

An engine (a ``vllm.LLM``, a transformers model and tokenizer) is built by the first backend that
asks for its key and reference-counted: each backend ``release``s it on ``close``, and the last one
out closes it (stops vLLM's processes, frees accelerator memory). Sampling, seeds and output formats
are per request, so sharing changes no output; the chatbots and the judge of the demo load SmolLM2
once. Which backends to close when is the pipeline's business (``dialogbench.backends.pool``).
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, TypeVar

from dialogbench.cells.keys import fingerprint

log = logging.getLogger("dialogbench.backends.engines")
E = TypeVar("E")

_engines: dict[str, Any] = {}
_users: dict[str, int] = {}
_lock = threading.RLock()


def acquire(spec: Any, build: Callable[[], E]) -> tuple[str, E]:
    """The engine for ``spec`` (anything JSON-able that identifies it), built on first use."""
    key = fingerprint(spec)
    with _lock:
        if key not in _engines:
            _engines[key] = build()
            log.info("engine %s loaded (%s)", key[:8], _describe(spec))
        _users[key] = _users.get(key, 0) + 1
        return key, _engines[key]


def release(key: str) -> None:
    """One user fewer; the last one closes the engine."""
    with _lock:
        if key not in _users:
            return
        _users[key] -= 1
        if _users[key] > 0:
            return
        engine = _engines.pop(key)
        del _users[key]
    close = getattr(engine, "close", None)
    if close is not None:
        close()
    log.info("engine %s released", key[:8])


def close_all() -> None:
    """Close every engine, whoever still uses it (end of a process, tests)."""
    with _lock:
        engines = list(_engines.values())
        _engines.clear()
        _users.clear()
    for engine in engines:
        close = getattr(engine, "close", None)
        if close is not None:
            close()


def loaded() -> dict[str, int]:
    """Engine key → number of backends using it (for tests and progress lines)."""
    with _lock:
        return dict(_users)


def _describe(spec: Any) -> str:
    if isinstance(spec, tuple) and len(spec) >= 2 and isinstance(spec[1], dict):
        return f"{spec[0]}: {spec[1].get('model', spec[1])}"
    return str(spec)[:120]
