"""Names the lake gives on disk."""

from __future__ import annotations


def safe_name(value: str) -> str:
    """``value`` as a file name's part: letters, digits, ``._-``; anything else ``_``."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in str(value))
