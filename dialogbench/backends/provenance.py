"""What every stored row records of the engine that produced it: ``backend`` and ``backend_version``."""

from __future__ import annotations

from typing import Iterable

from dialogbench.backends.base import Completion
from dialogbench.run.config import ModelConfig


def provenance(model: ModelConfig, completions: Iterable[Completion]) -> dict[str, str | None]:
    """``backend``: the config's backend; ``backend_version``: the engine versions the replies came
    from (vLLM / transformers version; an endpoint's served model id and ``system_fingerprint``),
    distinct ones joined with "; " (a dialogue's replies normally share one)."""
    versions = sorted({c.engine for c in completions if c.engine})
    return {"backend": model.backend, "backend_version": "; ".join(versions) or None}
