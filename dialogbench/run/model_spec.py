"""A model named on the command line (``dialogbench run --model SPEC``), the way lm-evaluation-harness users name
one, without writing YAML:

- ``vllm:PATH_OR_NAME`` (or ``transformers:…``): a local folder or file, a ``pkg://`` file, or a Hugging Face name;
- ``openai:NAME@URL``: the model NAME an OpenAI-compatible endpoint at URL (its ``/v1`` base) serves; the API key
  comes from the environment variable the config's OpenAI-compatible models read (``DIALOGBENCH_OPENAI_API_KEY`` by
  default), never from the command line;
- ``ALIAS=`` before either names the model on the boards (default: the weights' last path part).

The model's other settings (engine, sampling, lengths, device) are those of the config's first model of the same
backend (the box's settings for that engine, e.g. ``configs/demo.yaml``'s CPU engine), else the defaults."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

BACKENDS = ("vllm", "transformers", "openai")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
# what a copied model keeps as its own: never the template's identity or its script
OWN = ("name", "weights", "revision", "base_url", "script", "script_delay_s", "script_delay_per_conversation_s")


class SpecError(ValueError):
    """A --model value that names no model: the message says which and what is expected."""


@dataclass(frozen=True)
class ModelSpec:
    name: str
    backend: str
    weights: str
    base_url: str | None = None

    def entry(self, template: dict | None) -> dict:
        """The config's ``models`` entry: the template's settings with this model's identity."""
        entry = {k: v for k, v in (template or {}).items() if k not in OWN}
        entry.update(name=self.name, backend=self.backend, weights=self.weights)
        if self.base_url:
            entry["base_url"] = self.base_url
        return entry


def parse(spec: str) -> ModelSpec:
    """``[ALIAS=]BACKEND:WHAT`` → a ModelSpec (SpecError naming the flag's value otherwise)."""
    text = spec.strip()
    alias = None
    head, sep, rest = text.partition(":")
    if "=" in head:  # ALIAS=backend:…
        alias, _, head = head.partition("=")
    if not sep or head not in BACKENDS or not rest:
        raise SpecError(f"--model {spec!r}: expected BACKEND:WHAT with BACKEND one of {', '.join(BACKENDS)} "
                        "(vllm:Qwen/Qwen2.5-7B-Instruct, vllm:/models/my-model, openai:NAME@http://host:8000/v1), "
                        "optionally ALIAS= before it")
    base_url = None
    if head == "openai":
        found = re.fullmatch(r"(.+?)@([a-zA-Z][a-zA-Z0-9+.-]*://.+)", rest)
        served, url = found.groups() if found else ("", "")
        if not served:
            raise SpecError(f"--model {spec!r}: an OpenAI-compatible endpoint is openai:NAME@URL "
                            "(e.g. openai:meta-llama/Llama-3.1-8B-Instruct@http://localhost:8000/v1)")
        base_url, rest = check_url(url, what=f"--model {spec!r}"), served
    name = alias if alias is not None else default_name(rest)
    if not NAME.fullmatch(name or ""):
        raise SpecError(f"--model {spec!r}: {name!r} cannot name a model (letters, digits, '.', '_', '-', starting "
                        "with a letter or digit): put ALIAS= before it")
    return ModelSpec(name=name, backend=head, weights=rest, base_url=base_url)


def default_name(weights: str) -> str:
    """The weights' last path part, without a file suffix, held to the name rule (``Qwen/Qwen2.5-7B-Instruct`` →
    ``Qwen2.5-7B-Instruct``; ``/models/x.gguf`` → ``x``)."""
    last = weights.rstrip("/").rsplit("/", 1)[-1]
    last = re.sub(r"\.(gguf|safetensors|bin|pt)$", "", last, flags=re.IGNORECASE)
    return re.sub(r"[^A-Za-z0-9._-]+", "-", last).strip("-._")


def check_url(url: str, *, what: str) -> str:
    """An endpoint's base URL: http(s), a host, no user or password in it and no query (secrets come from the
    environment only)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SpecError(f"{what}: {url!r} is not an http(s) URL with a host (e.g. http://localhost:8000/v1)")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise SpecError(f"{what}: the URL carries a user, password, query or fragment; an API key goes in the "
                        "environment variable the model's api_key_env names (DIALOGBENCH_OPENAI_API_KEY by default)")
    return url


def names(specs: list[str]) -> list[str]:
    return [parse(s).name for s in specs]
