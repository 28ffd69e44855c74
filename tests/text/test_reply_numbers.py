"""Numbers read from a reply: read whole, bounded, never converted past what a protocol could mean."""

from __future__ import annotations

import re

import pytest

from dialogbench.text.reply_numbers import NUMBER, bounded_int

WHOLE = re.compile(f"({NUMBER})")


@pytest.mark.parametrize("text, read", [
    ("7", "7"), ("7.5", "7.5"), ("1e30", "1e30"), ("-3", "-3"), ("+7", "+7"), ("3.", "3."), (".5", ".5"),
    ("12,000", "12,000"), ("7/10", "7"), ("7, 8", "7"), ("NaN", "NaN"), ("-Infinity", "-Infinity"),
    ("information", None), ("nano", None), ("7.5,3", None),
])
def test_a_number_is_matched_whole_or_not_at_all(text, read):
    """Never a prefix of a longer number: "1" of "1e30" or "7" of "7.5" would be a plausible wrong answer."""
    match = WHOLE.match(text)
    assert (match.group(1) if match else None) == read


@pytest.mark.parametrize("raw, value, error", [
    ("7", 7, None), ("+7", 7, None), ("7.000", 7, None), ("1e1", 10, None),
    ("7.5", None, "non-integer n 7.5 (rejected, not rounded)"),
    ("11", None, "n 11 is outside 1..10"), ("-1", None, "n -1 is outside 1..10"), ("0", None, "n 0 is outside 1..10"),
    ("99999999999999999999999", None, "n 99999999999999999999999 is outside 1..10"),
    ("1e999999", None, "n 1e999999 is outside 1..10"),
    ("1e99999999999999999999", None, "n 1e99999999999999999999 is not a number in 1..10"),
    ("9" * 10**5, None, "n 9999999999999999… (100000 characters) is too long to be a number in 1..10"),
    ("nan", None, "n nan is not a finite number"), ("-inf", None, "n -inf is not a finite number"),
    ("1_0", None, "n 1_0 is not a number in 1..10"),
])
def test_bounded_int(raw, value, error):
    assert (bounded_int(raw, low=1, high=10, name="n").value, bounded_int(raw, low=1, high=10, name="n").error) == \
           (value, error)
