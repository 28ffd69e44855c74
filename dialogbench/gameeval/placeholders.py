"""Moves that repeat the prompt's placeholder text instead of saying something of their own.

A JSON move's instruction shows the object to reply with, each free-text field filled with a placeholder
(SpyFall's ``"speak": "your description"``). A model held to the move's schema but too small to play (the embedded
135M demo model) often copies those placeholders: the reply is valid JSON, so the host reads it as a move. By the
rules it still is one (the GameEval authors' host reads ``speak`` whatever it says, ``spyfall/agents/base_agent.py``
``describe()``/``vote()``, so it is no chat error here either), but a result built on such moves says nothing about
the model's play: the game flags them (``Game.event(placeholder=…)``: the transcript entry's flag, the row's
``placeholder_moves``) so the transcript, the explorer and the counts say so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_PAIR = re.compile(r'"(\w+)":\s*"([^"]*)"')  # "field": "placeholder" in an instruction's example object
_EDGES = " \t\r\n\"'`{}[]().,;:!?"
MIN_WORDS = 2  # a placeholder cut short by the field's length still counts from its first two words


def placeholders(instruction: str) -> dict[str, str]:
    """The example object's string fields in ``instruction``, field → placeholder, in the prompt's order."""
    return {field: text for field, text in _PAIR.findall(instruction)}


def _plain(text: str) -> str:
    return " ".join(text.strip(_EDGES).lower().split())


def repeated(reply: Mapping, holders: Mapping[str, str]) -> list[str]:
    """The fields of ``reply`` whose text is their placeholder, case, spacing and surrounding quotes, brackets and
    punctuation aside; a text that is the placeholder's beginning, cut anywhere after its first ``MIN_WORDS`` words
    (a constrained field's length ran out), counts too. In the prompt's order."""
    found = []
    for field, holder in holders.items():
        value = reply.get(field)
        if not isinstance(value, str):
            continue
        said, expected = _plain(value), _plain(holder)
        if said and (said == expected or (len(said.split()) >= MIN_WORDS and expected.startswith(said))):
            found.append(field)
    return found
