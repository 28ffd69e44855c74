"""A toy fourth family (tests/toy_family.py: generate, then judge) runs through the real CLI and Prefect flow:
planned, computed, recorded, its failure resolved by the rerun, its verdicts in `judgments`, and the rerun after
that computes nothing."""

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


def query(sql: str, tmp_path) -> list[dict]:
    return json.loads(cli(["query", sql, "--lake", str(tmp_path / "lake"), "--format", "json"], tmp_path).stdout)


def test_a_toy_family_runs_through_the_real_flow(tmp_path):
    config = tmp_path / "toy.yaml"
    config.write_text(yaml.safe_dump({
        "lake": str(tmp_path / "lake"),
        # replies in turn: the second word fails the first time (a backend error), the others echo
        "models": [{"name": "parrot", "backend": "scripted", "script": ["said {n}", "!error:503 overloaded"]},
                   {"name": "grader", "backend": "scripted", "script": ["yes"]}],
        "toy": {"words": ["apple", "pear", "plum"], "models": ["parrot"], "judge": "grader"}}))
    cli(["run", "--config", str(config)], tmp_path, code=4)  # a failed cell fails the run (fail_on: any)
    stages = query("select stage, planned, cached, computed, failed from runs order by started_at", tmp_path)
    assert stages == [{"stage": "echo:parrot", "planned": 3, "cached": 0, "computed": 2, "failed": 1},
                      {"stage": "toy_grade", "planned": 2, "cached": 0, "computed": 2, "failed": 0}]
    [failure] = query("select stage, item_id, model from failures", tmp_path)
    assert failure == {"stage": "echo:parrot", "item_id": "pear", "model": "parrot"}
    assert {r["item_id"] for r in query("select item_id from current_cells where stage = 'echo:parrot'",
                                        tmp_path)} == {"apple", "pear", "plum"}

    cli(["run", "--config", str(config)], tmp_path)  # the failed cell only, and it resolves
    assert query("select count(*) as n from failures", tmp_path) == [{"n": 0}]
    cli(["run", "--config", str(config)], tmp_path)  # nothing left to compute
    runs = query("select stage, cached, computed, failed from runs order by started_at", tmp_path)
    assert [(r["stage"], r["cached"], r["computed"], r["failed"]) for r in runs] == [
        ("echo:parrot", 0, 2, 1), ("toy_grade", 0, 2, 0), ("echo:parrot", 2, 1, 0), ("toy_grade", 2, 1, 0),
        ("echo:parrot", 3, 0, 0), ("toy_grade", 3, 0, 0)]
    # its judge's verdicts are in the shared judgments view, with no SQL written for them
    grades = query("select protocol, judge, item_id, parsed from judgments order by item_id", tmp_path)
    assert grades == [{"protocol": "toy_grade", "judge": "grader", "item_id": w, "parsed": True}
                      for w in ("apple", "pear", "plum")]
    # its own table, read from the files (the query path reads views only): each cell once
    echoes = f"read_parquet('{tmp_path / 'lake' / 'toy_echoes'}/**/*.parquet')"
    assert duckdb.sql(f"select count(*), count(distinct cell_key) from {echoes}").fetchall() == [(3, 3)]
