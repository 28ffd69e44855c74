"""A judge's rating out of every bound (issue 32): the MT-Bench-101 judge stage stores it once as an unparsed
verdict and completes; the next run computes nothing for it."""

from __future__ import annotations

import pytest

from dialogbench.backends import clear_backends
from dialogbench.run.runs import sum_reports
from tests import stage_runner as stages
from tests.conftest import chatbot, config_dict
from tests.verdicts import verdicts

FOUR_HUNDRED_NINES = "9" * 400  # float() of it is inf: int(inf) raised OverflowError


def judge_run(config, run_id: str):
    clear_backends()
    stages.answer(config, "bot-a", run_id)
    chunks, planned = stages.plan_judging(config, run_id)
    return sum_reports([planned, *(stages.judge(config, c, run_id) for c in chunks)])


@pytest.mark.parametrize("reply, error", [
    (f"Rating: [[{FOUR_HUNDRED_NINES}]]", "rating 9999999999999999… (400 characters) in [[…]] is too long"),
    ("Rating: [[99999999999999999999999]]", "rating 99999999999999999999999 in [[…]] is outside 1..10"),
    ("Rating: 1e999", "rating 1e999 in 'Rating:' is outside 1..10"),
    ("Rating: [[nan]]", "rating nan in [[…]] is not a finite number"),
])
def test_a_rating_out_of_bounds_is_stored_once_as_an_unparsed_verdict(make_config, lake_dir, reply, error):
    data = config_dict(lake_dir, models=[chatbot("bot-a", ["a{n}"])], judge_script=[reply])
    data["mtbench101"] = {"enabled": True, "judge": "judge", "tasks": ["GR"], "limit": 1}
    config = make_config(data)
    first = judge_run(config, "run-1")
    assert first.computed == first.planned > 0 and first.failed == 0
    rows = verdicts(config.lake, "mtbench101_judge")
    assert len(rows) == first.planned
    assert all((r["parsed"], r["score"]) == (False, None) and error in r["parse_error"] for r in rows)
    again = judge_run(config, "run-2")
    assert (again.cached, again.computed, again.failed) == (first.planned, 0, 0)
