"""Numbers read from a model's reply (a judge's index or rating), bounded before anything stores them.

A reply is free text: a judge not held to its format (an OpenAI-compatible endpoint ignores a regex it was
sent, a local one may run unconstrained) can answer ``Index: 99999999999999999999999``, ``Rating: 1e999``,
``[[nan]]`` or a thousand digits. Read naively, such a number overflows an int32 column (the chunk fails, is
retried, and fails again every night), becomes ``inf`` / ``nan`` in a float column, or is cut to a wrong but
plausible value (``1e30`` read as 1, ``-1`` as 1, ``7.00000000000000000001`` rounded to 7). Here a number is
read whole (sign, decimals, exponent, ``nan`` / ``inf`` words) as an exact decimal, and only an integer inside
the protocol's range comes back; anything else is a one-line reason the caller stores as an unparsed verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

# A number as a reply writes it, read whole: digit groups ("1,000", "3,4"), decimals, exponents, the nan / inf
# words; the lookahead forbids stopping inside one ("12" of "123", "7" of "7.5" or "1e30"), so a regex built on it
# never captures a plausible prefix of a wrong number.
NUMBER = (r"[-+]?(?:(?:\d+(?:[,_]\d+)*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?![\d_]|[.,]\d|[eE][-+]?\d)"
          r"|(?i:nan|inf(?:inity)?)\b)")
MAX_CHARS = 64  # longer than any number a protocol asks for: not converted at all (a reply can hold 100k digits)
SHOWN_CHARS = 24  # an error quotes the number up to this long, then its length


@dataclass(frozen=True)
class Bounded:
    """An integer in range (``value``) or why there is none (``error``, one line)."""

    value: int | None
    error: str | None = None


def shown(raw: str) -> str:
    """``raw`` as an error quotes it: whole when short, else its start and its length."""
    return raw if len(raw) <= SHOWN_CHARS else f"{raw[:SHOWN_CHARS - 8]}… ({len(raw)} characters)"


def bounded_int(raw: str, *, low: int, high: int, name: str, where: str = "") -> Bounded:
    """``raw`` (a match of ``NUMBER``) as an integer in ``low..high``: ``7``, ``7.0`` and ``+7`` are 7; a
    fraction is rejected, not rounded; ``nan`` / ``inf``, an overflowing exponent or a number out of range is
    an error naming ``name`` (``where``: where it was found, e.g. " in [[…]]")."""
    raw = raw.strip()
    if len(raw) > MAX_CHARS:
        return Bounded(None, f"{name} {shown(raw)}{where} is too long to be a number in {low}..{high}")
    try:
        if "," in raw or "_" in raw:  # "1,000", "3,4": a list, a European decimal or a big number; Decimal
            raise InvalidOperation    # would read "1_0" as 10
        value = Decimal(raw)
    except InvalidOperation:  # not a number, or an exponent past what a decimal holds (1e-99999999999999999999)
        return Bounded(None, f"{name} {shown(raw)}{where} is not a number in {low}..{high}")
    if not value.is_finite():
        return Bounded(None, f"{name} {shown(raw)}{where} is not a finite number")
    if value != value.to_integral_value():
        return Bounded(None, f"non-integer {name} {shown(raw)}{where} (rejected, not rounded)")
    if not low <= value <= high:
        return Bounded(None, f"{name} {shown(raw)}{where} is outside {low}..{high}")
    return Bounded(int(value))
