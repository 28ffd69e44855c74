"""Output formats: the shape a reply must take, for constrained decoding (structured outputs).

A protocol states the format its prompt asks for: a regular expression (UniEval's Choice / Index /
Reason lines, the Arena verdict, MT-Bench-101's ``Rating: [[n]]``) or a JSON schema (GameEval's
moves). A backend that can enforce it does (vLLM structured outputs; xgrammar on transformers; an
OpenAI-compatible server's ``response_format`` or vLLM-server extras); one that cannot leaves the
text free, and the tolerant parsers read it as before. Which kinds a model enforces is its
``structured_outputs`` setting (see ``enforced_kinds``); it is part of the keys of the cells that ask
for a format, so turning it on or off recomputes them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Sequence

from dialogbench.run.config import ModelConfig
from dialogbench.cells.keys import fingerprint

LOCAL_BACKENDS = ("vllm", "transformers")


@dataclass(frozen=True)
class OutputFormat:
    """A named format: exactly one of ``regex`` or ``schema`` (a JSON schema, as canonical JSON text)."""

    name: str
    regex: str | None = None
    schema: str | None = None

    def __post_init__(self) -> None:
        if (self.regex is None) == (self.schema is None):
            raise ValueError(f"output format {self.name!r}: give exactly one of regex or schema")

    @classmethod
    def json(cls, name: str, schema: dict[str, Any]) -> "OutputFormat":
        return cls(name=name, schema=json.dumps(schema, separators=(",", ":")))  # property order is the reply order

    @property
    def kind(self) -> str:
        return "regex" if self.regex is not None else "json"

    @property
    def schema_dict(self) -> dict[str, Any]:
        return json.loads(self.schema) if self.schema is not None else {}

    @property
    def label(self) -> str:
        """What the lake records of a constrained reply: ``regex:unieval`` / ``json:spyfall-vote``."""
        return f"{self.kind}:{self.name}"


def enforced_kinds(model: ModelConfig) -> frozenset[str]:
    """The format kinds ``model``'s backend enforces.

    ``auto``: local engines (vllm, transformers) enforce regexes and JSON schemas; an OpenAI-compatible
    endpoint enforces JSON schemas (``response_format``, which OpenAI, vLLM, SGLang and llama.cpp
    servers accept) and leaves regex formats free; ``scripted`` enforces nothing. ``json``: JSON
    schemas only. ``all``: both (on ``openai``, regexes go as vLLM-server ``structured_outputs``, so the
    endpoint must be a ``vllm serve``). ``off``: free text."""
    mode = model.structured_outputs
    if mode == "off" or model.backend == "scripted":
        return frozenset()
    if mode == "all":
        return frozenset({"regex", "json"})
    if mode == "json":
        return frozenset({"json"})
    return frozenset({"regex", "json"}) if model.backend in LOCAL_BACKENDS else frozenset({"json"})


def format_key(model: ModelConfig, format_: "OutputFormat | None") -> list[str]:
    """What a cell's key adds for its format on ``model``: the format itself when ``model`` enforces
    it (so turning structured outputs on or off, or editing the format, recomputes the cell), nothing
    when the text is free (the keys of unconstrained cells are what they were before formats existed)."""
    applied = enforced(format_, enforced_kinds(model))
    return [] if applied is None else [fingerprint("format", applied.kind, applied.name, applied.regex or applied.schema)]


def text_budget(max_tokens: int, *, reserved: int, floor: int = 8) -> int:
    """Characters a free-text part of a format may take so that the whole reply fits ``max_tokens``
    even at one character per token (``reserved``: tokens the fixed parts need)."""
    return max(floor, max_tokens - reserved)


def per_conversation(formats: "OutputFormat | Sequence[OutputFormat | None] | None",
                     n: int) -> list[OutputFormat | None]:
    """``formats`` as one entry per conversation (one format for all, or a list of ``n``)."""
    if formats is None or isinstance(formats, OutputFormat):
        return [formats] * n
    formats = list(formats)
    if len(formats) != n:
        raise ValueError(f"generate: {len(formats)} output formats for {n} conversations")
    return formats


def enforced(format_: OutputFormat | None, kinds: frozenset[str]) -> OutputFormat | None:
    """The format if its kind is enforced, else None (free text)."""
    return format_ if format_ is not None and format_.kind in kinds else None
