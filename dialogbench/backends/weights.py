"""Resolve a model config's ``weights`` to something a loader opens, or fail naming the field."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

PKG_SCHEME = "pkg://"


@dataclass(frozen=True)
class ResolvedWeights:
    path: str  # a directory, a file, or (vllm/openai) a model name
    gguf_file: str | None = None  # set when ``path`` is the directory of a GGUF file


def resolve_weights(weights: str, *, must_exist: bool = True) -> ResolvedWeights:
    """``pkg://DIST/FILE`` is FILE inside the installed Python package DIST (found without importing
    it); a path is taken as is; anything else is a hub-style model name (``must_exist`` False only).
    Raises FileNotFoundError with a message that says what was looked for."""
    if weights.startswith(PKG_SCHEME):
        package, _, filename = weights[len(PKG_SCHEME):].partition("/")
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            raise FileNotFoundError(f"package {package!r} is not installed (needed for weights {weights!r})")
        path = Path(spec.origin).parent / filename
        if not path.exists():
            raise FileNotFoundError(f"{filename!r} not found in package {package!r} ({path.parent})")
        return _local(path)
    path = Path(weights).expanduser()
    if path.exists():
        return _local(path)
    looks_like_path = weights.startswith((".", "/", "~")) or weights.endswith(".gguf")
    if must_exist or looks_like_path:
        raise FileNotFoundError(f"weights path {weights!r} does not exist")
    return ResolvedWeights(path=weights)


def _local(path: Path) -> ResolvedWeights:
    if path.is_file() and path.suffix == ".gguf":
        return ResolvedWeights(path=str(path.parent), gguf_file=path.name)
    return ResolvedWeights(path=str(path))
