"""How long replies are, in tokens, estimated from their words: what ``dialogbench plan`` expects a protocol's
replies to take when the lake has no history of them yet (no tokenizer is loaded to plan a night)."""

from __future__ import annotations

from typing import Iterable

# English prose under the BPE tokenizers of the models we run (cl100k, Llama's, Qwen's, Mistral's) is about 0.75
# words a token: 4/3 tokens a word. An estimate for capacity planning, not a count.
TOKENS_PER_WORD = 4 / 3


def words_to_tokens(words: float, *, cap: int) -> float:
    """The estimated tokens of a reply of ``words`` words, at most ``cap`` (a reply stops at its max_tokens)."""
    return min(cap, words * TOKENS_PER_WORD)


def typical_reply_tokens(texts: Iterable[str], *, cap: int) -> float | None:
    """The mean estimated tokens of ``texts``, each at most ``cap``; None when there is no text."""
    lengths = [words_to_tokens(len(text.split()), cap=cap) for text in texts]
    return sum(lengths) / len(lengths) if lengths else None
