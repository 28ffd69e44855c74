"""A toy fourth family (tests/toy_family.py: generate, then judge) runs through the real CLI and Prefect flow:
planned, computed, recorded, its failure resolved by the rerun, its verdicts in `judgments`, and the rerun after
that computes nothing.

The three runs are the scenario; what they recorded is read with `dialogbench query` twice, not once per question:
each query is a CLI process of its own (~3 s of CPU), so the questions asked at one point are columns of one query
(``lists``), each an aggregate ``list(...)`` of the rows it asks for."""

from __future__ import annotations

import json
import subprocess
import sys

import duckdb
import pytest
import yaml

from tests.e2e.conftest import REPO, cli_env

pytestmark = pytest.mark.slow
RUN = "import sys, tests.toy_family; from dialogbench.cli import main; sys.exit(main(sys.argv[1:]))"


def cli(args: list[str], tmp_path, code: int = 0) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-c", RUN, *args], cwd=REPO, env=cli_env(tmp_path), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == code, done.stdout + done.stderr
    return done


def lists(tmp_path, **selects: str) -> dict[str, list]:
    """One `dialogbench query` answering several questions: each of ``selects`` (name -> a select of one aggregate
    ``list(...)``) is a column of its one row; an empty list (SQL NULL) is ``[]``."""
    sql = "select " + ", ".join(f"({select}) as {name}" for name, select in selects.items())
    [row] = json.loads(cli(["query", sql, "--lake", str(tmp_path / "lake"), "--format", "json"], tmp_path).stdout)
    return {name: row[name] or [] for name in selects}


RUNS = "select list({%s} order by started_at) from runs"  # one stage of one run a row, in the order they ran


def test_a_toy_family_runs_through_the_real_flow(tmp_path):
    config = tmp_path / "toy.yaml"
    config.write_text(yaml.safe_dump({
        "lake": str(tmp_path / "lake"),
        # replies in turn: the second word fails the first time (a backend error), the others echo
        "models": [{"name": "parrot", "backend": "scripted", "script": ["said {n}", "!error:503 overloaded"]},
                   {"name": "grader", "backend": "scripted", "script": ["yes"]}],
        "toy": {"words": ["apple", "pear", "plum"], "models": ["parrot"], "judge": "grader"}}))
    cli(["run", "--config", str(config)], tmp_path, code=4)  # a failed cell fails the run (fail_on: any)
    first = lists(
        tmp_path,
        stages=RUNS % "'stage': stage, 'planned': planned, 'cached': cached, 'computed': computed, 'failed': failed",
        failures="select list({'stage': stage, 'item_id': item_id, 'model': model}) from failures",
        echoed="select list(item_id order by item_id) from current_cells where stage = 'echo:parrot'")
    assert first["stages"] == [{"stage": "echo:parrot", "planned": 3, "cached": 0, "computed": 2, "failed": 1},
                               {"stage": "toy_grade", "planned": 2, "cached": 0, "computed": 2, "failed": 0}]
    assert first["failures"] == [{"stage": "echo:parrot", "item_id": "pear", "model": "parrot"}]
    assert set(first["echoed"]) == {"apple", "pear", "plum"}

    cli(["run", "--config", str(config)], tmp_path)  # the failed cell only, and it resolves
    cli(["run", "--config", str(config)], tmp_path)  # nothing left to compute
    last = lists(
        tmp_path,
        failures="select list(item_id) from failures",
        runs=RUNS % "'stage': stage, 'cached': cached, 'computed': computed, 'failed': failed",
        grades="select list({'protocol': protocol, 'judge': judge, 'item_id': item_id, 'parsed': parsed} "
               "order by item_id) from judgments")
    # the second run resolved the failure (the third computed nothing: it could not have)
    assert last["failures"] == []
    assert [(r["stage"], r["cached"], r["computed"], r["failed"]) for r in last["runs"]] == [
        ("echo:parrot", 0, 2, 1), ("toy_grade", 0, 2, 0), ("echo:parrot", 2, 1, 0), ("toy_grade", 2, 1, 0),
        ("echo:parrot", 3, 0, 0), ("toy_grade", 3, 0, 0)]
    # its judge's verdicts are in the shared judgments view, with no SQL written for them
    assert last["grades"] == [{"protocol": "toy_grade", "judge": "grader", "item_id": w, "parsed": True}
                              for w in ("apple", "pear", "plum")]
    # its own table, read from the files (the query path reads views only): each cell once
    echoes = f"read_parquet('{tmp_path / 'lake' / 'toy_echoes'}/**/*.parquet')"
    assert duckdb.sql(f"select count(*), count(distinct cell_key) from {echoes}").fetchall() == [(3, 3)]
