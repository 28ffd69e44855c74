"""A run, built once at an entry point and handed down.

The CLI's ``run``, ``validate`` and ``plan``, the pipeline flow a deployment starts and a dispatched unit's work
flow each turn a config path and its flags into one ``Run`` (``dialogbench.run.registry.build_run``): the config,
loaded and validated once, the families it was validated against, and what follows from them, worked out on first
use and kept: the stages of every enabled family in pipeline order, the model schedule, the lake opened with its
layout. Everything below the entry points (tasks, flows, preflight, dispatch, reuse) receives the ``Run`` and asks
no global registry, so one run sees one set of families and one set of stages (building the judge checks' rotated
probe stages alone takes seconds) however many tasks ask.

A ``Run`` is a plain object, not a dataclass: Prefect passes it to tasks and subflows as it is (it visits dataclasses
field by field) and records it as its config and source (``flows.prefect_internals.RedactedParametersFlow``)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Sequence

from dialogbench.cells.shared_tables import SHARED_TABLES
from dialogbench.lake import Lake
from dialogbench.lake.catalog import SQL_DIR, connect
from dialogbench.lake.layout import Layout
from dialogbench.lake.legacy import merge
from dialogbench.run.family_spec import Family, family_named
from dialogbench.run.pool import Schedule

if TYPE_CHECKING:
    from dialogbench.cells import Stage, Table
    from dialogbench.run.config import Config

CORE_SQL = "core"  # the views every family builds on (runs, plans, boards, current cells, usage, changes)


class Run:
    """``config``: validated with ``families`` (every family known when the run was built, enabled or not: a report
    reads every family's views); ``source``: the config's path (what provenance, tags and units name); ``overrides``:
    the flags applied to it (a dispatched unit loads the same config with them)."""

    __slots__ = ("config", "families", "source", "overrides", "_stages", "_schedule", "_lake", "_building")

    def __init__(self, *, config: "Config", families: Sequence[Family], source: str = "config",
                 overrides: dict[str, Any] | None = None) -> None:
        self.config = config
        self.families: tuple[Family, ...] = tuple(families)
        self.source = str(source)
        self.overrides: dict[str, Any] = dict(overrides or {})
        self._stages: dict[str, list["Stage"]] | None = None
        self._schedule: Schedule | None = None
        self._lake: Lake | None = None
        self._building = threading.Lock()  # a stage's chunks run on threads: the stages are still built once

    def __repr__(self) -> str:
        return f"Run(source={self.source!r}, board={self.board!r}, lake={self.config.lake!r})"

    @property
    def board(self) -> str:
        return self.config.board

    @property
    def enabled(self) -> list[Family]:
        """The families this config turns on, in pipeline order."""
        return [f for f in self.families if f.enabled(self.config)]

    def family(self, name: str) -> Family:
        return family_named(self.families, name)

    def _by_family(self) -> dict[str, list["Stage"]]:
        with self._building:  # built once: every later question is answered from here
            if self._stages is None:
                self._stages = {f.name: f.stages_of(self.config, self.families) for f in self.enabled}
        return self._stages

    @property
    def stages(self) -> list["Stage"]:
        """The stages of every enabled family, in pipeline order."""
        return [stage for stages in self._by_family().values() for stage in stages]

    def family_stages(self, name: str) -> list["Stage"]:
        """The stages of the family ``name`` (none when the config does not enable it)."""
        family_named(self.families, name)  # an unknown name is a bug: say so
        return list(self._by_family().get(name, []))

    def stage_names(self) -> dict[str, list[str]]:
        """Each enabled family that has stages, with their names in pipeline order (a family of checks only, such as
        the judge checks, has none)."""
        found = {name: [stage.name for stage in stages] for name, stages in self._by_family().items()}
        return {name: names for name, names in found.items() if names}

    def stage(self, name: str) -> "Stage":
        for stage in self.stages:
            if stage.name == name:
                return stage
        raise KeyError(f"no stage {name!r} in this config's run")

    @property
    def schedule(self) -> Schedule:
        """Which models each stage calls, in pipeline order (``pool.Schedule``)."""
        stages = self.stages
        with self._building:
            if self._schedule is None:
                self._schedule = Schedule(self.config, stages)
        return self._schedule

    @property
    def lake(self) -> Lake:
        """The run's lake, opened with the layout of its families."""
        if self._lake is None:
            self._lake = Lake(self.config.lake, layout=layout_of(self.families))
        return self._lake

    def leaderboards(self) -> dict:
        """Each enabled family's leaderboard rows (what the CLI prints), by family name, read on the run's board."""
        with connect(self.lake, board=self.board) as con:
            return {f.name: f.leaderboard(self.config, con) for f in self.enabled if f.leaderboard}

    def with_config(self, config: "Config") -> "Run":
        """The same run on another config (a unit's, with its own board): its stages are built again."""
        return Run(config=config, families=self.families, source=self.source, overrides=self.overrides)

    def recorded(self) -> dict[str, Any]:
        """What Prefect records of a run passed to a flow: its config (redacted there) and its source."""
        return {"config": self.config, "source": self.source}


def tables_of(families: Sequence[Family]) -> list["Table"]:
    """Every lake table: the shared ones (failures, plans, runs, the history's), then each family's (a table two
    families share appears once)."""
    from dialogbench.history import HISTORY_TABLES

    found = {t.name: t for t in (*SHARED_TABLES, *HISTORY_TABLES)}
    for fam in families:
        for table in fam.tables:
            found.setdefault(table.name, table)
    return list(found.values())


def layout_of(families: Sequence[Family]) -> Layout:
    """What a lake holding these families' data holds (``lake.layout``): every table, every family's reference
    tables, the shared SQL folder (``sql/core``) then each family's, and the names the families stored in older
    formats (``Family.legacy``)."""
    references = {name: build for fam in families for name, build in fam.references.items()}
    return Layout(tables={t.name: t for t in tables_of(families)}, references=references,
                  sql=(SQL_DIR / CORE_SQL, *(SQL_DIR / f.sql for f in families if f.sql)),
                  legacy=merge(f.legacy for f in families))
