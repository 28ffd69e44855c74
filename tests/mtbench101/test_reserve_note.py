"""A config that evaluates every MT-Bench-101 dialogue while its judge is checked on MT-Bench-101's known-answer
items is told, at validate time and before a run, that those items are then not held out."""

from __future__ import annotations

from dialogbench.run.preflight import check
from dialogbench.run.registry import run_for
from tests.conftest import config_dict

NOTE = "mtbench101.reserve_for_probes: 0"


def _notes(make_config, lake_dir, probes: int = 54, **mtbench101) -> list[str]:
    data = config_dict(lake_dir)
    data["mtbench101"] = {"enabled": True, "limit": 1, "tasks": ["CM"], **mtbench101}
    data["judge_checks"]["probes"] = probes  # (the scripted configs ask none)
    return [n for n in check(run_for(make_config(data), source="c.yaml")).notes if NOTE in n]


def test_evaluating_the_reserved_slice_is_noted(make_config, lake_dir):
    (note,) = _notes(make_config, lake_dir, reserve_for_probes=0)
    assert note.startswith("c.yaml: ") and "not from a held-out slice" in note


def test_the_default_reserve_or_no_probes_is_not_noted(make_config, lake_dir):
    assert _notes(make_config, lake_dir) == []
    assert _notes(make_config, lake_dir, probes=0, reserve_for_probes=0) == []
