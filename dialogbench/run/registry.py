"""The protocol families of dialogbench. A family is one folder with a ``FAMILY`` (its config section,
stages, tables, leaderboard and report section); registering it is one line here."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from dialogbench.run import config as configs
from dialogbench.cells import Stage, Table
from dialogbench.cells.shared_tables import SHARED_TABLES
from dialogbench.run.family_spec import Family
from dialogbench.lake import Lake
from dialogbench.lake.catalog import SQL_DIR, connect
from dialogbench.lake.layout import Layout
from dialogbench.lake.legacy import merge

CORE_SQL = "core"  # the views every family builds on (runs, plans, boards, current cells, usage, changes)

if TYPE_CHECKING:
    from dialogbench.run.config import Config

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


def layout() -> Layout:
    """What the lake holds (``lake.layout``): every table, every family's reference tables, the shared SQL folder
    (``sql/core``) then each family's, and the names the families stored in older formats (``Family.legacy``)."""
    return Layout(tables={t.name: t for t in tables()}, references=references(),
                  sql=(SQL_DIR / CORE_SQL, *(SQL_DIR / f.sql for f in families() if f.sql)),
                  legacy=merge(f.legacy for f in families()))


def open_lake(root: str | os.PathLike) -> Lake:
    """The lake at ``root``, with the registered families' layout (what its catalog, ``repair`` and ``migrate``
    read)."""
    return Lake(root, layout=layout())


def leaderboards(config: "Config") -> dict:
    """Each enabled family's leaderboard rows (what the CLI prints), by family name, read on the config's board."""
    with connect(open_lake(config.lake), board=config.board) as con:
        return {f.name: f.leaderboard(config, con) for f in families() if f.enabled(config) and f.leaderboard}


def stages(config: "Config") -> list[Stage]:
    """The stages of every family the config enables, in pipeline order."""
    found = families()
    return [stage for fam in found if fam.enabled(config) for stage in fam.stages_of(config, found)]


def family_stages(config: "Config", name: str) -> list[Stage]:
    """The stages of the family ``name`` for ``config``."""
    return family(name).stages_of(config, families())


def stage(config: "Config", name: str) -> Stage:
    for candidate in stages(config):
        if candidate.name == name:
            return candidate
    raise KeyError(f"no stage {name!r} in this config's run")


def load_config(path, overrides: dict | None = None, *, root=None) -> "Config":
    """A YAML config, its flags applied, validated with the registered families' sections
    (``dialogbench.run.config.load_config``)."""
    return configs.load_config(path, overrides, families=families(), root=root)


def validate_config(raw: dict) -> "Config":
    """A config mapping validated with the registered families' sections (no file, no flags, no path resolution)."""
    return configs.validate_config(raw, families=families())
