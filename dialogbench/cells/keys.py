"""Fingerprints and cell keys: stable hashes of what determines a result."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def fingerprint(*parts: Any) -> str:
    """A 32-hex-digit SHA-256 of the canonical JSON of ``parts`` (order of dict keys ignored)."""
    payload = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


def model_fingerprint(model: Any) -> str:
    """The fingerprint of what determines a model config's outputs (``ModelConfig.fingerprint_fields``)."""
    return fingerprint(model.fingerprint_fields())
