"""The protocol families of dialogbench. A family is one folder with a ``FAMILY`` (its config section,
stages, tables, leaderboard and report section); registering it is one line here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dialogbench.cells import Stage, Table
from dialogbench.cells.shared_tables import SHARED_TABLES
from dialogbench.family import Family

if TYPE_CHECKING:
    from dialogbench.config import Config

_FAMILIES: dict[str, Family] = {}  # added at run time (a plugin, a test's toy family), after the built-in ones


def builtin_families() -> list[Family]:
    """The families dialogbench ships: one line each."""
    from dialogbench.botchat.family import FAMILY as BOTCHAT
    from dialogbench.canary.family import FAMILY as CANARY
    from dialogbench.gameeval.family import FAMILY as GAMEEVAL
    from dialogbench.judge_checks.family import FAMILY as JUDGE_CHECKS
    from dialogbench.mtbench101.family import FAMILY as MTBENCH101

    return [BOTCHAT, MTBENCH101, GAMEEVAL, CANARY, JUDGE_CHECKS]  # the canary repeats the others' judgments: last


def register(family: Family) -> Family:
    """Add ``family`` after the built-in ones; re-registering a name replaces it."""
    _FAMILIES[family.name] = family
    return family


def unregister(name: str) -> None:
    _FAMILIES.pop(name, None)


def families() -> list[Family]:
    extra = [f for f in _FAMILIES.values()]
    found = [f for f in builtin_families() if f.name not in _FAMILIES] + extra
    return sorted(found, key=lambda f: f.runs_last)  # stable: registry order otherwise


def references() -> dict:
    """Every family's generated reference tables, by view name (builders, called when the catalog is built)."""
    return {name: build for fam in families() for name, build in fam.references.items()}


def family(name: str) -> Family:
    for fam in families():
        if fam.name == name:
            return fam
    raise KeyError(f"no family {name!r} (registered: {', '.join(f.name for f in families())})")


def tables() -> list[Table]:
    """Every lake table: the shared ones (failures, plans, runs, the history's), then each family's (a table two
    families share appears once)."""
    from dialogbench.history import HISTORY_TABLES

    found = {t.name: t for t in (*SHARED_TABLES, *HISTORY_TABLES)}
    for fam in families():
        for table in fam.tables:
            found.setdefault(table.name, table)
    return list(found.values())


def stages(config: "Config") -> list[Stage]:
    """The stages of every family the config enables, in pipeline order."""
    return [stage for fam in families() if fam.enabled(config) for stage in fam.stages(config)]


def stage(config: "Config", name: str) -> Stage:
    for candidate in stages(config):
        if candidate.name == name:
            return candidate
    raise KeyError(f"no stage {name!r} in this config's run")

