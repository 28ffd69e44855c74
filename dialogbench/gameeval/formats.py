"""The JSON a move asks for, as a schema for constrained decoding (``backends.formats``).

A move's prompt names its fields (§4.1's chain-of-thought JSON: ``thought``, ``speak``, ``name`` …).
``MoveShape`` says which are free text and which pick from a list (a living player, a question
number), in the order the prompt gives them. The schema is built per model, because the free-text
fields share a character budget that keeps the whole object within the model's ``max_tokens`` even at
one character per token: a constrained reply always closes. Every field is required and no other is
allowed, so an OpenAI endpoint's strict ``json_schema`` mode accepts the same schema.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from dialogbench.backends.formats import OutputFormat

MIN_TEXT = 8  # characters a free-text field gets however small max_tokens is


@dataclass(frozen=True)
class MoveShape:
    name: str                                   # "spyfall-vote"
    fields: tuple[str, ...]                     # every field, in the order the prompt lists them
    choices: tuple[tuple[str, tuple], ...] = ()  # field → the values it may take

    def output_format(self, *, max_tokens: int) -> OutputFormat:
        choices = dict(self.choices)
        text = [f for f in self.fields if f not in choices]
        skeleton = {f: (max(choices[f], key=lambda v: len(json.dumps(v))) if f in choices else "") for f in self.fields}
        budget = max(0, max_tokens - len(json.dumps(skeleton, separators=(",", ":"))))
        lengths = _split(budget, len(text))
        properties = {}
        for field in self.fields:
            if field in choices:
                properties[field] = {"enum": list(choices[field])}
            else:
                properties[field] = {"type": "string", "minLength": 1, "maxLength": lengths[text.index(field)]}
        return OutputFormat.json(self.name, {"type": "object", "properties": properties,
                                             "required": list(self.fields), "additionalProperties": False})


def _split(budget: int, n: int) -> list[int]:
    """The first free-text field (the thought) gets half the budget, the others share the rest."""
    if n == 0:
        return []
    if n == 1:
        return [max(MIN_TEXT, budget)]
    first = budget // 2
    rest = (budget - first) // (n - 1)
    return [max(MIN_TEXT, first)] + [max(MIN_TEXT, rest)] * (n - 1)
