"""The model pool: which models each stage of a run uses, in the order the pipeline runs them; and the release rule:
when a stage starts, every backend that no stage from there on uses is closed (an engine shared by
several model configs stops with the last of them, see ``backends.engines``). One accelerator then
holds only what the rest of the run needs: a chatbot's engine goes after its last stage, a judge's
after the judging, and the demo's single SmolLM2 engine serves the whole run.
"""

from __future__ import annotations

import logging

from dialogbench.backends import release_except
from dialogbench.config import Config, ModelConfig

log = logging.getLogger("dialogbench.pool")


def stage_models(config: Config) -> list[tuple[str, list[ModelConfig]]]:
    """Every model-using stage of the run (every enabled family's), in pipeline order, with its models."""
    from dialogbench import registry

    order = []
    for stage in registry.stages(config):
        models = stage.models(config)
        if models:
            order.append((stage.name, models))
    return order


def models_from(config: Config, stage: str) -> list[ModelConfig]:
    """The models ``stage`` and every later stage use (every model of the run if ``stage`` is unknown)."""
    order = stage_models(config)
    names = [name for name, _ in order]
    start = names.index(stage) if stage in names else 0
    return list({m.name: m for _, models in order[start:] for m in models}.values())


def stage_after(config: Config, stage: str) -> str | None:
    """The model-using stage that follows ``stage`` (None after the last)."""
    names = [name for name, _ in stage_models(config)]
    return names[names.index(stage) + 1] if stage in names and names.index(stage) + 1 < len(names) else None


def release_before(config: Config, stage: str) -> list[str]:
    """Close the backends no stage from ``stage`` on needs; returns the models released."""
    released = release_except(models_from(config, stage))
    if released:
        log.info("%s: released %s (no later stage uses them)", stage, ", ".join(released))
    return released


def release_all() -> list[str]:
    """The end of a run: every backend goes, and with them their engines (vLLM's processes stop)."""
    released = release_except([])
    if released:
        log.info("released %s (the run is over)", ", ".join(released))
    return released
