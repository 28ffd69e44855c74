"""Which backends a stage releases: those no stage from it on uses (dialogbench.run.pool)."""

from __future__ import annotations

from dialogbench.run import registry
from dialogbench.backends import get_backend
from dialogbench.run.pool import Schedule, release_all
from tests.conftest import chatbot, config_dict


def _config(make_config, lake_dir, **mtbench):
    data = config_dict(lake_dir, models=[chatbot("bot-a"), chatbot("bot-b")])
    data["mtbench101"] = {"enabled": True, "models": ["bot-a"], "judge": "judge", "tasks": ["GR"], "limit": 1, **mtbench}
    return make_config(data)


def test_stage_order_and_what_each_uses(make_config, lake_dir):
    config = _config(make_config, lake_dir)
    schedule = Schedule(config, registry.stages(config))
    order = [(name, [m.name for m in models]) for name, models in schedule.order]
    assert order == [("generate:bot-a", ["bot-a"]), ("generate:bot-b", ["bot-b"]), ("botchat_unieval", ["judge"]),
                     ("mtbench101_answer:bot-a", ["bot-a"]), ("mtbench101_judge", ["judge"])]
    assert [m.name for m in schedule.models_from("generate:bot-b")] == ["bot-b", "judge", "bot-a"]
    assert schedule.stage_after("botchat_unieval") == "mtbench101_answer:bot-a"
    assert schedule.stage_after("mtbench101_judge") is None
    assert [m.name for m in schedule.models_after("botchat_unieval")] == ["bot-a", "judge"]


def test_each_stage_releases_what_no_later_stage_needs(make_config, lake_dir):
    config = _config(make_config, lake_dir)
    schedule = Schedule(config, registry.stages(config))
    for name in ("bot-a", "bot-b", "judge"):
        get_backend(config.model(name))
    # bot-a answers MT-Bench-101 later: it stays; bot-b is done after its dialogues
    assert schedule.release_before("generate:bot-b") == []
    assert schedule.release_before("botchat_unieval") == ["bot-b"]
    assert schedule.release_before("mtbench101_answer:bot-a") == []  # the judge judges MT-Bench-101 too
    get_backend(config.model("bot-a"))
    assert schedule.release_before("mtbench101_judge") == ["bot-a"]
    assert release_all() == ["judge"]
