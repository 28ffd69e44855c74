"""The model pool: which models each stage of a run uses, in the order the pipeline runs them; and the release rule:
when a stage starts, every backend that no stage from there on uses is closed (an engine shared by
several model configs stops with the last of them, see ``backends.engines``). One accelerator then
holds only what the rest of the run needs: a chatbot's engine goes after its last stage, a judge's
after the judging, and the demo's single SmolLM2 engine serves the whole run.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Iterator, Sequence

from dialogbench.backends import release_except

if TYPE_CHECKING:
    from dialogbench.cells import Stage
    from dialogbench.run.config import Config, ModelConfig

log = logging.getLogger("dialogbench.pool")


class Schedule:
    """The run's model-using stages in pipeline order (``stages``: the run's, ``registry.stages(config)``), each with
    the models it calls."""

    def __init__(self, config: "Config", stages: Sequence["Stage"]) -> None:
        self.order: list[tuple[str, list[ModelConfig]]] = [(s.name, models) for s in stages
                                                            if (models := s.models(config))]
        self._config, self._stages = config, {s.name: s for s in stages}

    def models(self) -> list["ModelConfig"]:
        """Every model a stage of the run calls, each once, in run order."""
        return list({m.name: m for _, models in self.order for m in models}.values())

    def models_from(self, stage: str) -> list["ModelConfig"]:
        """The models ``stage`` and every later stage use (every model of the run if ``stage`` is unknown)."""
        names = [name for name, _ in self.order]
        start = names.index(stage) if stage in names else 0
        return list({m.name: m for _, models in self.order[start:] for m in models}.values())

    def stage_after(self, stage: str) -> str | None:
        """The model-using stage that follows ``stage`` (None after the last)."""
        names = [name for name, _ in self.order]
        return names[names.index(stage) + 1] if stage in names and names.index(stage) + 1 < len(names) else None

    def models_after(self, stage: str) -> list["ModelConfig"]:
        """The models the stages after ``stage`` use (what a stage releasing engines midway keeps)."""
        after = self.stage_after(stage)
        return self.models_from(after) if after else []

    def loaded(self) -> Iterator[tuple[str, list["ModelConfig"]]]:
        """(stage, the models whose engines are loaded together while it runs), for each group of models the stage
        loads at once: the group, with every model of an earlier stage or group that a later one still uses (what
        ``release_before`` and a stage releasing midway keep)."""
        for i, (stage, _) in enumerate(self.order):
            groups = self._stages[stage].model_groups(self._config)  # a stage may read its data files for them
            for j, group in enumerate(groups):
                later = {m.name for g in groups[j + 1:] for m in g} | {m.name for m in self.models_after(stage)}
                before = [m for _, models in self.order[:i] for m in models] + [m for g in groups[:j] for m in g]
                kept = [m for m in before if m.name in later]
                yield stage, list({m.name: m for m in [*kept, *group]}.values())

    def release_before(self, stage: str) -> list[str]:
        """Close the backends no stage from ``stage`` on needs; returns the models released."""
        released = release_except(self.models_from(stage))
        if released:
            log.info("%s: released %s (no later stage uses them)", stage, ", ".join(released))
        return released


def release_all() -> list[str]:
    """The end of a run: every backend goes, and with them their engines (vLLM's processes stop)."""
    released = release_except([])
    if released:
        log.info("released %s (the run is over)", ", ".join(released))
    return released
