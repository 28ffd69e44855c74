"""What failed cells do to a run: the ``fail_on`` config (any / share / never), the stages it names, its message,
the run's tags, and the one warning per stage (with the first error, redacted)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import yaml

from dialogbench.config import ConfigError, FailOn
from dialogbench import registry
from dialogbench.registry import load_config
from dialogbench.runs import StageReport, failing_stages, failure_message, family_tags, run_tags
from tests.conftest import config_dict

REPO = Path(__file__).resolve().parents[1]


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


def _write(tmp_path: Path, **top) -> Path:
    data = config_dict(tmp_path / "lake")
    data["botchat"].update(dataset=str(REPO / "data_lake/raw/botchat/mutual_test.jsonl"),
                           unieval_examples=str(REPO / "data_lake/raw/botchat/unieval_examples.json"))
    data.update(top)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_config_default_and_share(tmp_path):
    assert load_config(_write(tmp_path)).fail_on == FailOn(cells="any")
    config = load_config(_write(tmp_path, fail_on={"cells": "share", "share": 0.2}))
    assert config.fail_on.cells == "share" and config.fail_on.share == 0.2


@pytest.mark.parametrize("fail_on, message", [
    ({"cells": "some"}, "fail_on.cells"),
    ({"cells": "share", "share": 1.0}, "fail_on.share"),
    ({"cells": "share", "share": -0.1}, "fail_on.share"),
    ({"cells": "any", "share": 0.1}, "share is read only with cells: share"),
    ({"cell": "any"}, "fail_on.cell"),
])
def test_config_errors_name_the_field(tmp_path, fail_on, message):
    with pytest.raises(ConfigError) as error:
        load_config(_write(tmp_path, fail_on=fail_on))
    assert message in str(error.value) and "c.yaml" in str(error.value)


def test_run_tags_name_the_config_families_and_models(tmp_path):
    config = load_config(_write(tmp_path))
    assert run_tags(config, "configs/nightly.yaml", ["botchat"], registry.stages(config)) == [
        "config:nightly", f"board:{config.board}", "family:botchat", "model:bot-a", "model:bot-b", "model:judge"]
    assert family_tags(config, "configs/nightly.yaml", "botchat", registry.family_stages(config, "botchat")) == [
        "config:nightly", f"board:{config.board}", "family:botchat", "model:bot-a", "model:bot-b", "model:judge"]
    only_b = load_config(_write(tmp_path), {"models": ["bot-b"]})
    assert "model:bot-a" not in run_tags(only_b, "c.yaml", ["botchat"], registry.stages(only_b))


def test_one_warning_per_stage_with_the_first_error_redacted(tmp_path, caplog):
    from dialogbench.cells.cell import Cell
    from dialogbench.cells.runner import finish_stage
    from dialogbench.cells.stage import Emit
    from dialogbench.registry import open_lake

    config = load_config(_write(tmp_path))
    cells = [Cell(key=f"k{i}", item_id=f"i{i}", roles={"model": "bot-a"}) for i in range(3)]
    secret = "sk-" + "a" * 40
    emits = [Emit(open_lake(config.lake), "s", None, "run-1") for _ in range(2)]
    with caplog.at_level(logging.DEBUG, logger="dialogbench"):
        emits[0]([], [(cells[0], f"HTTP 401: bad key {secret}", None), (cells[1], "timeout", None)])
        emits[1]([], [(cells[2], "timeout", None)])
        chunks = [StageReport("s", failed=e.failed, first_error=e.first_error) for e in emits]
        report = finish_stage(config, "run-1", [StageReport("s", planned=5, cached=2), *chunks], "c.yaml",
                              lake=registry.open_lake(config.lake))
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert report.failed == 3 and report.first_error.startswith("HTTP 401") and secret not in report.first_error
    assert len(warnings) == 1 and "s: 3 of 3 cell(s) failed, first error: HTTP 401" in warnings[0].getMessage()
    assert secret not in warnings[0].getMessage()


def test_the_documented_automation_is_a_valid_prefect_automation():
    from prefect.events.schemas.automations import AutomationCore

    [spec] = yaml.safe_load((REPO / "automations" / "notify-on-failure.yaml").read_text())["automations"]
    automation = AutomationCore.model_validate(spec)
    assert automation.trigger.expect == {"prefect.flow-run.Failed", "prefect.flow-run.Crashed"}
    assert automation.trigger.match_related.root == {"prefect.resource.role": "flow",
                                                     "prefect.resource.name": "dialogbench"}
    assert [a.type for a in automation.actions] == ["send-notification"]


def test_artifact_keys_are_valid_prefect_keys():
    from prefect.types.names import raise_on_name_alphanumeric_dashes_only

    from tasks.artifacts import key

    assert key("progress", "generate:SmolLM2_135m.v1") == "dialogbench-progress-generate-smollm2-135m-v1"
    assert key("leaderboard", "gameeval", "askguess") == "dialogbench-leaderboard-gameeval-askguess"
    for k in (key("stages"), key("progress", "botchat_unieval"), key("report", "md")):
        assert raise_on_name_alphanumeric_dashes_only(k, field_name="Artifact key") == k
