"""Read a player's chain-of-thought JSON reply (§4.1: ``thought`` / ``speak`` / ``name``) tolerantly.

Models wrap the object in prose or a code fence, use single quotes, Python literals or trailing
commas, or stop mid-object when they hit ``max_tokens``. ``parse_reply`` finds the first object
in the text that reads as a mapping; ``ReplyError`` says why none did. What a game does with a reply
it cannot read (a fallback, counted as a chat error) is the game's business, not this module's.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field

_FENCE = re.compile(r"```(?:json|JSON|python)?\s*(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_PLAYER = re.compile(r"\bplayer\s*_?\s*(\d+)\b", re.I)


class ReplyError(ValueError):
    """No JSON object could be read from a reply."""


def _candidates(text: str) -> list[str]:
    """Balanced ``{…}`` spans, fenced blocks first, in order of appearance; an unclosed last object
    is closed (a reply cut by ``max_tokens``)."""
    sources = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    spans = []
    for source in sources:
        depth, start, quote, escaped = 0, None, None, False
        for i, ch in enumerate(source):
            if quote:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == quote:
                    quote = None
                continue
            if ch in "\"'" and depth:
                quote = ch
            elif ch == "{":
                start = i if depth == 0 else start
                depth += 1
            elif ch == "}" and depth:
                depth -= 1
                if depth == 0:
                    spans.append(source[start: i + 1])
        if depth and start is not None:  # cut off: close the string and the object
            spans.append(source[start:] + (quote or "") + "}" * depth)
    return spans


def _load(span: str) -> dict | None:
    for attempt in (span, _TRAILING_COMMA.sub(r"\1", span)):
        try:
            value = json.loads(attempt)
        except (ValueError, RecursionError):  # RecursionError: "[[[[…" nested past the interpreter's limit
            try:
                value = ast.literal_eval(attempt)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
        if isinstance(value, dict):
            return {str(k).strip().lower(): v for k, v in value.items()}
    return None


def parse_reply(text: str | None, *, required: tuple[str, ...] = ()) -> dict:
    """The first mapping in ``text`` that has every ``required`` key (lower-cased keys; values as
    given). Raises ``ReplyError`` naming what was wrong."""
    if not text or not text.strip():
        raise ReplyError("empty reply")
    found = None
    for span in _candidates(text):
        value = _load(span)
        if value is None:
            continue
        if all(k in value for k in required):
            return value
        found = found or value
    if found is not None:
        missing = [k for k in required if k not in found]
        raise ReplyError(f"JSON object without {', '.join(repr(k) for k in missing)}")
    raise ReplyError("no JSON object in the reply")


def first_object(text: str | None) -> dict | None:
    """The first mapping ``parse_reply`` can read in ``text`` whatever its keys, or None when there is none."""
    try:
        return parse_reply(text)
    except ReplyError:
        return None


@dataclass(frozen=True)
class Speech:
    """What the other players hear of a move whose public part is one field (``speak``), and how it was read.

    ``heard``: the field's text; ``""`` (the empty value, what the GameEval authors' players hear of ``"speak":
    ""``) when the field is blank (empty, whitespace, null, an empty list) or the reply's JSON object lacks it, so
    nothing of a JSON reply but that field ever reaches another player (its thought stays private); only a reply
    with no JSON object at all is heard as its text (``heard()``: it has no fields to tell its thought from its
    speech). ``reply``: the JSON object read ({} when none); ``error``: why no field could be read (None: read);
    ``blank``: ``"null"`` or ``"blank"`` when the field is there but says nothing (None otherwise)."""

    heard: str
    reply: dict = field(default_factory=dict)
    error: str | None = None
    blank: str | None = None


def read_speech(raw: str | None, key: str = "speak") -> Speech:
    """The public ``key`` of a reply (``Speech``)."""
    try:
        reply = parse_reply(raw, required=(key,))
    except ReplyError as exc:
        found = first_object(raw)
        if found is None:
            return Speech(heard(raw), {}, str(exc))
        return Speech("", found, str(exc))  # a JSON object without the field: its thought is not for the others
    text = text_field(reply, key)
    if text is None:
        return Speech("", reply, None, "null" if reply.get(key) is None else "blank")
    return Speech(text, reply)


def text_field(reply: dict, key: str) -> str | None:
    """A field as stripped text (numbers and lists joined), None when absent or empty."""
    value = reply.get(key)
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        value = " ".join(str(v) for v in value)
    value = str(value).strip()
    return value or None


def heard(raw: str | None, *, limit: int = 300) -> str:
    """What the other players hear from a reply that is not usable JSON: its text, whitespace
    collapsed, cut to ``limit`` characters."""
    return " ".join((raw or "").split())[:limit] or "(says nothing)"


def player_names(text: str | None) -> list[str]:
    """``playerN`` mentions in free text, normalised ("Player 3" → "player3"), in order."""
    return [f"player{m.group(1)}" for m in _PLAYER.finditer(text or "")]


def normalise_player(value) -> str | None:
    """A reply's ``name`` value as a canonical player name, or None when it names none."""
    if value is None:
        return None
    if isinstance(value, int):
        return f"player{value}"
    names = player_names(str(value))
    if names:
        return names[0]
    text = str(value).strip().lower()
    return f"player{text}" if text.isdigit() else (text or None)
