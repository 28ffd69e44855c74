"""Checks that stop a run before any compute: weights that do not exist, endpoints with no URL."""

from __future__ import annotations

import os

from dialogbench.backends.weights import resolve_weights
from dialogbench.config import Config, ConfigError, ModelConfig


def models_in_use(config: Config) -> list[ModelConfig]:
    """Every model a stage of the run calls (chatbots, judges, players), each once, in run order."""
    from dialogbench.pool import stage_models

    return list({m.name: m for _, models in stage_models(config) for m in models}.values())


def preflight(config: Config, *, source: str = "config") -> None:
    problems = []
    for model in models_in_use(config):
        where = f"{source}: model {model.name!r}"
        if model.backend in ("transformers", "vllm"):
            try:
                resolve_weights(model.weights or "", must_exist=model.backend == "transformers")
            except FileNotFoundError as exc:
                problems.append(f"{where}: weights: {exc}")
        if model.backend == "openai" and not os.environ.get(model.base_url_env):
            problems.append(f"{where}: base_url_env: environment variable {model.base_url_env} is not set")
        if model.backend == "vllm":
            try:
                import vllm  # noqa: F401
            except ImportError:
                problems.append(f"{where}: backend: vllm is not installed (pip install '.[vllm]')")
    if problems:
        raise ConfigError("\n".join(problems))
