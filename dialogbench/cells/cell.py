"""A cell: one unit of result (an item, the models in their roles, the judge), keyed by what decides it."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping


@dataclass(frozen=True)
class Cell:
    """``key`` is the fingerprint of everything that determines the result; ``roles`` maps each role
    (``model``, ``first``/``second``, ``spy``/``villager``…) to the model that plays it. ``payload``
    is what computing the cell needs (a dialogue, a prompt's parts, a game setup), never recorded."""

    key: str
    item_id: str
    roles: Mapping[str, str] = field(default_factory=dict)
    judge: str | None = None
    task: str | None = None
    payload: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "roles", MappingProxyType(dict(self.roles)))

    @property
    def models(self) -> list[str]:
        """The distinct models of the cell, sorted: the scope its plan is the latest one for."""
        return sorted(set(self.roles.values()))

    @property
    def model(self) -> str | None:
        """The cell's model when it has exactly one (what ``failures.model`` and ``plans.model`` hold)."""
        models = self.models
        return models[0] if len(models) == 1 else None


@dataclass(frozen=True)
class Chunk:
    """A slice of a stage's missing cells: one orchestrated task, one or a few backend calls."""

    stage: str
    index: int
    total: int
    cells: tuple[Cell, ...]

    @property
    def name(self) -> str:
        return f"{self.stage} {self.index}/{self.total}"


def chunked(stage: str, cells: list[Cell], size: int | None) -> list[Chunk]:
    """``cells`` cut into chunks of ``size`` (None: one chunk), in order; no cells, no chunks."""
    if not cells:
        return []
    size = size or len(cells)
    total = (len(cells) + size - 1) // size
    return [Chunk(stage, k + 1, total, tuple(cells[i: i + size])) for k, i in enumerate(range(0, len(cells), size))]
