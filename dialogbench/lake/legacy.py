"""What the lake's migrations must know of the names the families stored in older formats, declared by the families
(each its ``Legacy``: dialogbench/<family>/legacy.py) and handed to the lake in its layout (``Layout.legacy``: the
registered families' merged by ``dialogbench.run.registry.layout``), so that the lake's code names no family, no
protocol and no family's table: ``version.migrate`` and ``renames`` read them from here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, NamedTuple


class Unpacked(NamedTuple):
    """A format-1 ``plans`` row's packed ``model`` string as format 2 stores it: ``roles`` (role -> model) and
    ``scope`` (the models the plan is the latest one for; None: its models, as for a plain one-model plan)."""

    roles: dict[str, str]
    scope: list[str] | None = None


# (stage, packed model string) -> the row's roles and scope, or None where the stage is not the family's to unpack
Unpacker = Callable[[str, str], "Unpacked | None"]


@dataclass(frozen=True)
class Legacy:
    """``verdict_tables``: a judge protocol's name in the format-2 ``judgments`` table -> the verdict table its rows
    move to (format 2 -> 3); ``stages`` and ``protocols``: an old stage or judge protocol name -> its new one, rewritten
    wherever the lake stores it (format 4 -> 5, ``renames``); ``unpackers``: how a family's stages packed the models of
    a format-1 plan into one string (format 1 -> 2; a stage no unpacker claims holds one model or none)."""

    verdict_tables: Mapping[str, str] = field(default_factory=dict)
    stages: Mapping[str, str] = field(default_factory=dict)
    protocols: Mapping[str, str] = field(default_factory=dict)
    unpackers: tuple[Unpacker, ...] = ()

    @property
    def renamed(self) -> dict[str, Mapping[str, str]]:
        """Column -> old value -> new: what format 5 rewrites."""
        return {"stage": self.stages, "protocol": self.protocols}


def merge(parts: Iterable[Legacy]) -> Legacy:
    """The families' declarations as one, in their order (a name two declare: the later one's)."""
    parts = list(parts)
    return Legacy(verdict_tables={k: v for p in parts for k, v in p.verdict_tables.items()},
                  stages={k: v for p in parts for k, v in p.stages.items()},
                  protocols={k: v for p in parts for k, v in p.protocols.items()},
                  unpackers=tuple(u for p in parts for u in p.unpackers))
