"""Parsing the judge's 1–10 rating out of its reply.

The judge is told (Figure 22) to end with ``Rating: [[score]]``, e.g. ``Rating: [[6]]``. Judges
drift: markdown (``**Rating:** [[7]]``), a bare ``Rating: 7``, ``Rating: 7/10``. The rules:

* A double-bracketed number anywhere wins over a bare ``Rating: n``, and among several the *last*
  wins: judges often quote the format (``for example 'Rating: [[6]]'``) before giving their own.
* Without brackets, the last ``Rating:`` / ``Score:`` label followed by a number is used.
* Decimals: ``[[7.0]]`` is accepted as 7, ``[[7.5]]`` is *rejected* (unparsed). The scale is an
  integer one, and the dialogue score is a minimum over turns; rounding 7.5 up or down would put a
  number the judge never gave into that minimum. A rejected reply shows up in the left-out count
  instead of silently moving a score.
* Out of range (0, 11, -3, ``1e30``, forty digits) or not a finite number (``nan``, ``inf``, ``1e999``) →
  unparsed, never clamped. A number is read whole (``reply_numbers``): ``[[1e30]]`` is not a 1, and
  ``[[7.00000000000000000001]]`` is not a 7.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dialogbench.backends.formats import OutputFormat, text_budget
from dialogbench.text.reply_numbers import NUMBER, bounded_int

_NUMBER = f"({NUMBER})"
_BRACKETED = re.compile(r"\[\[\s*" + _NUMBER + r"\s*\]\]")
_LABELLED = re.compile(r"(?:rating|score)\s*[*_`]*\s*[:：]\s*[*_`\[\s]*" + _NUMBER, re.IGNORECASE)


@dataclass(frozen=True)
class Rating:
    """A parsed rating (``score`` in 1..10) or an unparsed one (``score`` None, ``error`` says why)."""

    score: int | None
    error: str | None = None

    @property
    def parsed(self) -> bool:
        return self.score is not None


def parse_rating(text: str | None) -> Rating:
    """The judge's rating in ``text``; see the module docstring for the rules."""
    if not text or not text.strip():
        return Rating(None, "empty judge reply")
    found = _BRACKETED.findall(text)
    source = "[[…]]"
    if not found:
        found = _LABELLED.findall(text)
        source = "'Rating:'"
    if not found:
        return Rating(None, "no 'Rating: [[score]]' in the judge reply")
    score = bounded_int(found[-1], low=1, high=10, name="rating", where=f" in {source}")
    return Rating(score.value, score.error)


def output_format(*, max_tokens: int) -> OutputFormat:
    """What the judge prompts ask for, as a regex: an explanation (no square brackets, short enough
    that the reply ends within ``max_tokens``), then ``Rating: [[n]]`` with n in 1..10 on its own line.
    The explanation cannot hold a ``[[…]]`` of its own, so the rating parsed is the judge's rating."""
    explanation = text_budget(max_tokens, reserved=12)
    return OutputFormat(name="mtbench101-rating", regex=rf"[^\[\]]{{1,{explanation}}}\nRating: \[\[(?:10|[1-9])\]\]")
