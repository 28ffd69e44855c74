"""Offline tokenizers for estimates and length statistics (no network, no model download)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import tiktoken
from tiktoken.load import load_tiktoken_bpe

import dialogbench

CL100K_FILE = Path(dialogbench.__file__).resolve().parents[1] / "data_lake/raw/tiktoken/cl100k_base.tiktoken"

# The same split pattern and special tokens as ``tiktoken_ext.openai_public.cl100k_base``.
_CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_CL100K_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


@lru_cache(maxsize=1)
def cl100k() -> tiktoken.Encoding:
    """The CL100K encoding, built from the vendored rank file (loaded once per process)."""
    if not CL100K_FILE.is_file():
        raise FileNotFoundError(f"vendored tokenizer file not found: {CL100K_FILE}")
    ranks = load_tiktoken_bpe(str(CL100K_FILE), expected_hash=_CL100K_SHA256)
    return tiktoken.Encoding(
        name="cl100k_base", pat_str=_CL100K_PAT, mergeable_ranks=ranks, special_tokens=_CL100K_SPECIAL
    )


def count_cl100k(text: str) -> int:
    """Token count of ``text`` under CL100K; special-token strings count as plain text."""
    return len(cl100k().encode(text, disallowed_special=()))
