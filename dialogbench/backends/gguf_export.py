"""A GGUF file as a Hugging Face folder that vLLM loads: de-quantised once, cached on disk.

vLLM's CPU build does not run GGUF's quantised (Q4) weights, and its GGUF loader is experimental
on GPUs too. transformers reads a GGUF de-quantised to float32 (what the transformers backend runs),
but refuses ``save_pretrained`` on such a model; so the model is rebuilt from its config (without
the GGUF quantisation entry), given the de-quantised state dict, and saved with its tokenizer and
chat template. Both engines then run the very same float32 weights.

The folder lives under ``$DIALOGBENCH_CACHE_DIR`` (default ``~/.cache/dialogbench``) in
``weights/<stem>-<sha256 prefix>``; it is written to a temporary folder and renamed, so a killed
export leaves nothing a later run would load.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import time
import uuid
from pathlib import Path

log = logging.getLogger("dialogbench.backends.gguf_export")
EXPORT_VERSION = "gguf-export-v1"


def cache_root() -> Path:
    configured = os.environ.get("DIALOGBENCH_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dialogbench"


def _digest(path: Path) -> str:
    sha = hashlib.sha256(EXPORT_VERSION.encode())
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            sha.update(block)
    return sha.hexdigest()[:16]


def exported_folder(directory: str | Path, gguf_file: str) -> Path:
    """The HF folder of ``directory/gguf_file``, exported on first use."""
    source = Path(directory) / gguf_file
    target = cache_root() / "weights" / f"{source.stem}-{_digest(source)}"
    if (target / "config.json").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}-{uuid.uuid4().hex[:8]}.tmp"
    start = time.perf_counter()
    log.info("exporting %s to a float32 Hugging Face folder for vLLM (once): %s", source.name, target)
    try:
        _export(Path(directory), gguf_file, tmp)
        try:
            os.rename(tmp, target)
        except OSError:  # another process finished the same export first: keep its folder
            if not (target / "config.json").exists():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log.info("exported %s in %.1f s", source.name, time.perf_counter() - start)
    return target


def _export(directory: Path, gguf_file: str, out: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=gguf_file)
    loaded = AutoModelForCausalLM.from_pretrained(directory, gguf_file=gguf_file, dtype=torch.float32)
    settings = loaded.config.to_dict()
    settings.pop("quantization_config", None)
    config = type(loaded.config).from_dict(settings)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    result = model.load_state_dict(loaded.state_dict(), strict=False)
    unexpected = [k for k in result.unexpected_keys]
    missing = [k for k in result.missing_keys if "lm_head" not in k or not config.tie_word_embeddings]
    if missing or unexpected:
        raise RuntimeError(f"{gguf_file}: exported weights do not match (missing {missing[:5]}, unexpected {unexpected[:5]})")
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    if loaded.generation_config is not None:
        loaded.generation_config.save_pretrained(out)
