"""A run is built once at an entry point and handed down (``dialogbench/run/built.py``): its stages are built once
however many tasks ask, it answers for its families only, and nothing below the entry points asks the family
registry."""

from __future__ import annotations

import ast
import dataclasses
import threading
from pathlib import Path

import pytest

from dialogbench.run import registry
from dialogbench.run.built import Run, layout_of
from tests.conftest import REPO_ROOT, config_dict

# The entry points: a command (dialogbench/cli.py and the commands it calls, dialogbench/commands/), a deployment's
# flow, a dispatched unit's flow. They alone may ask the registry.
ENTRY_POINTS = {"dialogbench/cli.py", "dialogbench/stats/command.py", "tasks/lifecycle.py", "flows/work.py",
                "flows/unit_worker.py", "dialogbench/run/registry.py",
                *(str(p.relative_to(REPO_ROOT)) for p in (REPO_ROOT / "dialogbench" / "commands").glob("*.py"))}


def test_the_stages_are_built_once_whoever_asks(make_config):
    config = make_config()
    built: list[str] = []
    families = [dataclasses.replace(f, stages=_counting(f, built)) for f in registry.families()]
    run = Run(config=config, families=families, source="c.yaml")
    threads = [threading.Thread(target=lambda: (run.stages, run.schedule.models())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for name in [s.name for s in run.stages]:
        assert run.stage(name) is next(s for s in run.stages if s.name == name)
    assert run.family_stages("botchat") and run.family_stages("mtbench101") == []  # not enabled: no stages
    assert sorted(built) == sorted(f.name for f in run.enabled)  # each enabled family's stages built once
    assert [s.name for s in run.stages] == [s.name for s in registry.stages(config)]


def _counting(family: Family, built: list[str]):
    def stages(*args):
        built.append(family.name)
        return family.stages(*args)
    return stages


def test_an_unknown_family_or_stage_is_named(make_config):
    run = registry.run_for(make_config())
    with pytest.raises(KeyError, match="no family 'nope'"):
        run.family_stages("nope")
    with pytest.raises(KeyError, match="no stage 'nope'"):
        run.stage("nope")


def test_its_lake_has_its_families_layout_and_prefect_records_its_config(make_config):
    run = registry.run_for(make_config(), source="night.yaml", overrides={"limit": 2})
    assert run.lake.layout.tables.keys() == layout_of(registry.families()).tables.keys()
    assert run.lake is run.lake and str(run.lake.root) == run.config.lake
    assert run.recorded() == {"config": run.config, "source": "night.yaml"}
    assert run.board == run.config.board and run.overrides == {"limit": 2}


def test_build_run_loads_the_config_once_with_the_registered_families(config_file):
    run = registry.build_run(config_file(config_dict(Path("lake"))), {"limit": 1})
    assert run.config.botchat.limit == 1 and run.overrides == {"limit": 1}
    assert [f.name for f in run.families] == [f.name for f in registry.families()]


def test_nothing_below_the_entry_points_asks_the_registry():
    """tasks, flows, report, explorer, history, dispatch, preflight, reuse: they receive the run (or its families)."""
    asking = []
    for folder in ("dialogbench", "tasks", "flows"):
        for path in sorted((REPO_ROOT / folder).rglob("*.py")):
            name = str(path.relative_to(REPO_ROOT))
            if name in ENTRY_POINTS:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module == "dialogbench.run.registry" or \
                        isinstance(node, ast.ImportFrom) and node.module == "dialogbench.run" and \
                        any(a.name == "registry" for a in node.names) or \
                        isinstance(node, ast.Import) and any(a.name == "dialogbench.run.registry" for a in node.names):
                    asking.append(f"{name}:{node.lineno}")
    assert asking == []
