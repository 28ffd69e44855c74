"""The protocol families of dialogbench. A family is one folder with a ``FAMILY`` (its config section,
stages, tables, leaderboard and report section); registering it is one line here.

Only the entry points ask it: ``build_run`` turns a config path and its flags into the ``Run`` (``built.py``) that the
CLI, the pipeline flow of a deployment and a dispatched unit's work flow hand down; commands that read a lake without
a config (report, explore, export, query) open it here with every registered family. Tests and benches are entry
points too (``run_for``, ``stages``)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from dialogbench.run import config as configs
from dialogbench.cells import Stage, Table
from dialogbench.run.built import Run, layout_of, tables_of
from dialogbench.run.family_spec import Family
from dialogbench.lake import Lake
from dialogbench.lake.layout import Layout

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
    """Every lake table of the registered families (``built.tables_of``)."""
    return tables_of(families())


def layout() -> Layout:
    """What the lake holds with the registered families (``built.layout_of``)."""
    return layout_of(families())


def open_lake(root: str | os.PathLike) -> Lake:
    """The lake at ``root``, with the registered families' layout (what its catalog, ``repair`` and ``migrate``
    read)."""
    return Lake(root, layout=layout())


def leaderboards(config: "Config") -> dict:
    """Each enabled family's leaderboard rows, by family name (``Run.leaderboards``)."""
    return run_for(config).leaderboards()


def stages(config: "Config") -> list[Stage]:
    """The stages of every family the config enables, in pipeline order (``Run.stages``)."""
    return run_for(config).stages


def family_stages(config: "Config", name: str) -> list[Stage]:
    """The stages of the family ``name`` for ``config``."""
    return family(name).stages_of(config, families())


def stage(config: "Config", name: str) -> Stage:
    return run_for(config).stage(name)


def load_config(path, overrides: dict | None = None, *, root=None) -> "Config":
    """A YAML config, its flags applied, validated with the registered families' sections
    (``dialogbench.run.config.load_config``)."""
    return configs.load_config(path, overrides, families=families(), root=root)


def validate_config(raw: dict) -> "Config":
    """A config mapping validated with the registered families' sections (no file, no flags, no path resolution)."""
    return configs.validate_config(raw, families=families())


def build_run(path, overrides: dict | None = None, *, root=None) -> Run:
    """The run a config file and its flags describe, with the registered families: loaded and validated once, at an
    entry point (the CLI, the pipeline flow, a dispatched unit's work flow), then handed down."""
    found = families()
    config = configs.load_config(path, overrides, families=found, root=root)
    return Run(config=config, families=found, source=str(path), overrides=overrides)


def run_for(config: "Config", *, source: str = "config", overrides: dict | None = None) -> Run:
    """A ``Run`` of a config already loaded (a test's, a bench's), with the registered families."""
    return Run(config=config, families=families(), source=source, overrides=overrides)
