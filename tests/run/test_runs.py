"""Run bookkeeping (dialogbench/run/runs.py): what failed cells do to a run under the config's ``fail_on`` (any /
share / never), the stages it names and its message; and the run's tags (config, board, families, models)."""

from __future__ import annotations


import pytest

from dialogbench.run.config import FailOn
from dialogbench.run import registry
from dialogbench.run.registry import load_config
from dialogbench.run.runs import StageReport, failing_stages, failure_message, family_tags, run_tags
from tests.conftest import config_dict, written_config


def report(stage: str, computed: int, failed: int, cached: int = 0) -> StageReport:
    return StageReport(stage, planned=cached + computed + failed, cached=cached, computed=computed, failed=failed)


STAGES = [report("generate:a", 90, 10, cached=400), report("judge", 99, 1), report("clean", 50, 0)]


def names(stages) -> list[str]:
    return [s.stage for s in stages]


def test_any_failed_cell_fails_the_run_by_default():
    policy = FailOn()
    assert policy.cells == "any"
    assert names(failing_stages(STAGES, policy)) == ["generate:a", "judge"]
    assert failing_stages([report("clean", 50, 0)], policy) == []


@pytest.mark.parametrize("share, failing", [
    (0.0, ["generate:a", "judge"]),   # any failure is above 0
    (0.009, ["generate:a", "judge"]),  # judge: 1 of 100 = 1%
    (0.01, ["generate:a"]),            # not above: equal to the threshold passes
    (0.05, ["generate:a"]),            # generate:a: 10 of 100 tried (its 400 cached cells are not tried)
    (0.1, []),
    (0.5, []),
])
def test_share_counts_the_cells_each_stage_tried(share, failing):
    assert names(failing_stages(STAGES, FailOn(cells="share", share=share))) == failing


def test_share_of_a_stage_where_every_tried_cell_failed():
    stages = [report("generate:new", 0, 6, cached=1000)]
    assert names(failing_stages(stages, FailOn(cells="share", share=0.99))) == ["generate:new"]


def test_never_fails_the_run():
    assert failing_stages(STAGES, FailOn(cells="never")) == []


def test_stage_dicts_are_read_like_reports():
    assert names(failing_stages([s.to_dict() for s in STAGES], FailOn())) == ["generate:a", "judge"]


def test_message_names_the_stages_and_counts():
    policy = FailOn(cells="share", share=0.05)
    message = failure_message(failing_stages(STAGES, policy), policy)
    assert message.startswith("10 cell(s) failed in 1 stage(s)")
    assert "generate:a: 10 of 100 failed (10%)" in message and "more than 5.0%" in message
    assert "judge" not in message
    assert "any failed cell" in failure_message(failing_stages(STAGES, FailOn()), FailOn())


def test_run_tags_name_the_config_families_and_models(tmp_path):
    config = load_config(written_config(tmp_path))
    assert run_tags(config, "configs/nightly.yaml", ["botchat"], registry.stages(config)) == [
        "config:nightly", f"board:{config.board}", "family:botchat", "model:bot-a", "model:bot-b", "model:judge"]
    assert family_tags(config, "configs/nightly.yaml", "botchat", registry.family_stages(config, "botchat")) == [
        "config:nightly", f"board:{config.board}", "family:botchat", "model:bot-a", "model:bot-b", "model:judge"]
    only_b = load_config(written_config(tmp_path), {"models": ["bot-b"]})
    assert "model:bot-a" not in run_tags(only_b, "c.yaml", ["botchat"], registry.stages(only_b))
