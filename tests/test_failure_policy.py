"""What failed cells do to a run: the ``fail_on`` config (any / share / never), the stages it names, its message,
the run's tags, and the one warning per stage (with the first error, redacted)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import yaml

from dialogbench.run.config import ConfigError, FailOn
from dialogbench.run import registry
from dialogbench.run.registry import load_config
from dialogbench.run.runs import StageReport, failing_stages, failure_message, family_tags, run_tags
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
    from dialogbench.run.registry import open_lake

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


def _valid(k: str) -> str:
    from prefect.types.names import raise_on_name_alphanumeric_dashes_only

    return raise_on_name_alphanumeric_dashes_only(k, field_name="Artifact key")


def test_artifact_keys_are_valid_prefect_keys_naming_their_board():
    from tasks.artifacts import key

    assert key("progress", "generate:SmolLM2_135m.v1", board="nightly") == \
        "dialogbench-nightly-progress-generate-smollm2-135m-v1"
    assert key("leaderboard", "gameeval", "askguess", board="nightly") == \
        "dialogbench-nightly-leaderboard-gameeval-askguess"
    assert key("leaderboard", "botchat", board="nightly") == "dialogbench-nightly-leaderboard-botchat"
    for k in (key("stages", board="nightly"), key("progress", "botchat_unieval", board="demo+limit=4+n=4,8"),
              key("report", "md", board="Demo.v2")):
        assert _valid(k) == k


def test_two_boards_never_share_an_artifact_key():
    """The UI's latest version of a key is one board's: an ad-hoc run's leaderboard is not the nightly's, nor are two
    boards' whose names differ only in what a key cannot hold (case, '.', '+', '=')."""
    from tasks.artifacts import key

    boards = ["nightly", "demo", "nightly+limit=4", "nightly-limit-4", "Nightly", "a.b", "a-b", "a_b",
              "demo+models=a_b", "demo+models=a-b", "x" * 100 + "1", "x" * 100 + "2"]
    for parts in (("stages",), ("leaderboard", "botchat"), ("report", "md"), ("progress", "generate:bot-a")):
        keys = [key(*parts, board=b) for b in boards]
        assert len(set(keys)) == len(boards), keys
        assert all(_valid(k) == k for k in keys)
    # a board named from overrides keeps its readable slug, then a hash of the name
    adhoc = key("leaderboard", "botchat", board="demo+limit=4")
    assert adhoc.startswith("dialogbench-demo-limit-4-") and adhoc.endswith("-leaderboard-botchat")
    assert adhoc != key("leaderboard", "botchat", board="demo")


def test_a_long_board_or_stage_still_gives_a_short_valid_key():
    from dialogbench.run.boards import check_name
    from tasks.artifacts import BOARD_KEY_CHARS, KEY_MAX_CHARS, board_slug, key

    longest = check_name("n" * 100, what="board")  # the longest board a person may name
    adhoc = check_name("nightly+models=" + ",".join(f"Model_{i}.v1" for i in range(30)), what="b", adhoc=True)
    assert len(adhoc) > 300
    for board in (longest, adhoc, longest[:-1] + "m"):
        assert len(board_slug(board)) <= BOARD_KEY_CHARS and _valid(board_slug(board)) == board_slug(board)
        for parts in (("leaderboard", "gameeval", "tofukingdom"), ("progress", "generate:" + "Very_Long_Model" * 20)):
            k = key(*parts, board=board)
            assert len(k) <= KEY_MAX_CHARS and _valid(k) == k and k.startswith("dialogbench-n")
    assert board_slug(longest) != board_slug(longest[:-1] + "m")  # cut, yet told apart by their hash
    stage = "generate:" + "Very_Long_Model" * 20
    assert key("progress", stage, board="nightly") != key("progress", stage + "2", board="nightly")
    assert key("leaderboard", "botchat", board=adhoc).startswith("dialogbench-nightly-models-model-0-v1")


def test_the_board_of_a_published_artifact(monkeypatch):
    """Where the artifacts find their board: given, else the family subflow's config parameter, else the run's
    ``board:`` tag in force (the pipeline publishes inside ``prefect.tags(*run_tags)``)."""
    from types import SimpleNamespace

    from prefect import tags

    import tasks.artifacts as artifacts

    made: list[dict] = []
    monkeypatch.setattr(artifacts, "create_table_artifact", lambda **kwargs: made.append(kwargs))
    with tags("config:demo", "board:demo+limit=4", "family:botchat"):
        assert artifacts.run_board() == "demo+limit=4" and artifacts.run_board("nightly") == "nightly"
        artifacts.publish_stages("r1", [])
        artifacts.publish_leaderboards("r1", {"botchat": []}, board="nightly")
    assert [m["key"] for m in made] == [artifacts.key("stages", board="demo+limit=4"),
                                        "dialogbench-nightly-leaderboard-botchat"]
    family_run = SimpleNamespace(parameters={"run": SimpleNamespace(board="nightly")},
                                 flow_run=SimpleNamespace(tags=["board:other"]))
    monkeypatch.setattr(artifacts.FlowRunContext, "get", classmethod(lambda cls: family_run))
    assert artifacts.run_board() == "nightly"
    family_run.parameters = {"config_path": "configs/nightly.yaml"}  # the pipeline's flow run: its own tag
    assert artifacts.run_board() == "other"
    monkeypatch.setattr(artifacts.FlowRunContext, "get", classmethod(lambda cls: None))
    assert artifacts.run_board() is None and artifacts.key("stages", board=None) == "dialogbench-stages"
