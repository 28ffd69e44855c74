"""Text that leaves for a terminal or a page, made inert: control characters become visible escapes.

Model output is stored raw in the lake (it is the measurement), but printed as is it would act: ESC starts terminal
sequences (``\\x1b]52;c;…\\x07`` writes the clipboard, ``\\x1b[2J`` clears the screen), BEL rings, a lone CR
overwrites the line it is on, NUL truncates some viewers, and the Unicode bidi overrides reorder the text around
them so that what is shown is not what is there. ``visible`` writes each of them as an escape that reads as what
it is (``\\x1b``, ``\\x07``, ``\\x00``, ``\\u202e``): the C0 controls except newline and tab, DEL, the C1 controls
(U+0080–U+009F) and the bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069). A CRLF line end
is a line end and becomes a newline first.

Every renderer and printer calls it where its text leaves (report.html, report.md, the explorer page, the Prefect
artifacts, the CLI's lines); HTML escaping stays the renderers' own concern. ``visible_tree`` does the same to every
string of a JSON-like value (keys included)."""

from __future__ import annotations

import re
from typing import Any

CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control character (see the module's docstring) written as a visible escape."""
    if not CONTROLS.search(text):
        return text
    return CONTROLS.sub(_escape, text.replace("\r\n", "\n"))


def visible_tree(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, tuples, scalars) with ``visible`` applied to every string in it, dict
    keys included; anything else is returned as it is."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {visible_tree(k): visible_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [visible_tree(v) for v in value]
    if isinstance(value, tuple):
        return tuple(visible_tree(v) for v in value)
    return value
