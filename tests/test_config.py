"""Config errors stop before any compute, with a message that names the file and the field."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from dialogbench.cli import main
from dialogbench.config import ConfigError, apply_overrides, load_config
from tests.conftest import DATASET, REPO_ROOT, chatbot, config_dict


def config_error(config_file, data) -> tuple[str, str]:
    path = config_file(data)
    with pytest.raises(ConfigError) as info:
        load_config(path, root=REPO_ROOT)
    return str(info.value), str(path)


def test_valid_config_loads_with_absolute_paths(make_config, lake_dir):
    config = make_config()
    assert [m.name for m in config.models] == ["bot-a", "bot-b"]
    assert config.botchat.judge == "judge"
    assert config.botchat.n == [4, 8] and config.botchat.n_max == 8
    assert Path(config.botchat.dataset) == DATASET
    assert Path(config.lake) == lake_dir


def test_relative_paths_resolve_against_root(config_file, lake_dir, tmp_path):
    data = config_dict(lake_dir)
    data["lake"] = "my-lake"
    config = load_config(config_file(data), root=REPO_ROOT)
    assert Path(config.lake) == REPO_ROOT / "my-lake"
    assert Path(config.botchat.dataset) == DATASET  # the default, relative to the repo root


def test_unknown_backend(config_file, lake_dir):
    data = config_dict(lake_dir)
    data["models"][0] = {"name": "bot-a", "backend": "llamacpp", "weights": "x"}
    message, path = config_error(config_file, data)
    assert path in message
    assert "models[0].backend" in message
    assert "llamacpp" in message


def test_transformers_without_weights(config_file, lake_dir):
    data = config_dict(lake_dir)
    data["models"][1] = {"name": "bot-b", "backend": "transformers"}
    message, path = config_error(config_file, data)
    assert path in message
    assert "models[1]" in message
    assert "weights" in message


def test_scripted_without_script(config_file, lake_dir):
    data = config_dict(lake_dir)
    data["judges"][0].pop("script")
    message, path = config_error(config_file, data)
    assert "judges[0]" in message and "script" in message


@pytest.mark.parametrize("n", [[2], [4, 2], [0]])
def test_n_below_3(config_file, lake_dir, n):
    message, path = config_error(config_file, config_dict(lake_dir, n=n))
    assert path in message
    assert "botchat.n" in message
    assert ">= 3" in message


def test_n_sorted_and_deduplicated(make_config):
    config = make_config(n=[8, 4, 8])
    assert config.botchat.n == [4, 8]


def test_duplicate_model_names(config_file, lake_dir):
    data = config_dict(lake_dir, models=[chatbot("bot-a"), chatbot("bot-a")])
    message, path = config_error(config_file, data)
    assert path in message and "duplicate model names: bot-a" in message


def test_duplicate_name_across_models_and_judges(config_file, lake_dir):
    data = config_dict(lake_dir, models=[chatbot("bot-a"), chatbot("judge")])
    message, _ = config_error(config_file, data)
    assert "duplicate model names: judge" in message


def test_judge_not_configured(config_file, lake_dir):
    data = config_dict(lake_dir)
    del data["botchat"]["judge"]
    message, path = config_error(config_file, data)
    assert path in message and "botchat.judge" in message


def test_judge_names_unknown_model(config_file, lake_dir):
    data = config_dict(lake_dir)
    data["botchat"]["judge"] = "gpt-judge"
    message, _ = config_error(config_file, data)
    assert "botchat.judge" in message and "gpt-judge" in message


def test_judge_may_be_a_chatbot(make_config, lake_dir):
    data = config_dict(lake_dir)
    data["botchat"]["judge"] = "bot-a"
    assert make_config(data).botchat.judge == "bot-a"


def test_botchat_models_names_unknown_model(config_file, lake_dir):
    data = config_dict(lake_dir)
    data["botchat"]["models"] = ["bot-a", "bot-z"]
    message, path = config_error(config_file, data)
    assert path in message and "botchat.models" in message and "bot-z" in message


def test_botchat_models_cannot_name_a_judge(config_file, lake_dir):
    data = config_dict(lake_dir)
    data["botchat"]["models"] = ["judge"]
    message, _ = config_error(config_file, data)
    assert "botchat.models" in message


def test_unreadable_dataset(config_file, lake_dir, tmp_path):
    missing = tmp_path / "nope.jsonl"
    message, path = config_error(config_file, config_dict(lake_dir, dataset=str(missing)))
    assert path in message and "botchat.dataset" in message and str(missing) in message


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_dataset_without_read_permission(config_file, lake_dir, tmp_path):
    locked = tmp_path / "locked.jsonl"
    locked.write_text(DATASET.read_text())
    locked.chmod(0)
    message, _ = config_error(config_file, config_dict(lake_dir, dataset=str(locked)))
    assert "botchat.dataset" in message


def test_dataset_that_is_a_directory(config_file, lake_dir, tmp_path):
    message, _ = config_error(config_file, config_dict(lake_dir, dataset=str(tmp_path)))
    assert "botchat.dataset" in message


def test_unreadable_examples(config_file, lake_dir, tmp_path):
    message, _ = config_error(config_file, config_dict(lake_dir, unieval_examples=str(tmp_path / "x.json")))
    assert "botchat.unieval_examples" in message


def test_dataset_not_checked_when_botchat_disabled(make_config, lake_dir, tmp_path):
    data = config_dict(lake_dir, dataset=str(tmp_path / "nope.jsonl"), enabled=False)
    assert make_config(data).botchat.enabled is False


def test_unknown_top_level_key(config_file, lake_dir):
    data = config_dict(lake_dir)
    data["mtbench"] = {"enabled": True}
    message, path = config_error(config_file, data)
    assert path in message and "mtbench" in message


def test_unknown_nested_key(config_file, lake_dir):
    data = config_dict(lake_dir)
    data["models"][0]["temperature"] = 0.5  # belongs under sampling
    message, _ = config_error(config_file, data)
    assert "models[0].temperature" in message


def test_every_error_reported_at_once(config_file, lake_dir):
    data = config_dict(lake_dir, n=[2])
    data["models"][0]["backend"] = "nope"
    message, _ = config_error(config_file, data)
    assert "models[0].backend" in message and "botchat.n" in message


def test_missing_file_and_bad_yaml(config_file, tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "absent.yaml", root=REPO_ROOT)
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(config_file("models: [\n"), root=REPO_ROOT)
    with pytest.raises(ConfigError, match="mapping at the top level"):
        load_config(config_file("- a\n- b\n"), root=REPO_ROOT)


def test_overrides_take_effect(make_config, tmp_path):
    other_lake = tmp_path / "other-lake"
    config = make_config(overrides={"limit": 7, "models": ["bot-b"], "n": [5, 3], "judge": "bot-a",
                                    "lake": str(other_lake)})
    assert config.botchat.limit == 7
    assert [m.name for m in config.botchat_models()] == ["bot-b"]
    assert config.botchat.n == [3, 5]
    assert config.botchat.judge == "bot-a"
    assert Path(config.lake) == other_lake


def test_none_overrides_keep_the_yaml_values(make_config):
    config = make_config(overrides={"limit": None, "models": None, "n": None, "judge": None, "lake": None})
    assert config.botchat.limit == 3 and config.botchat.n == [4, 8] and config.botchat.judge == "judge"


def test_overrides_are_validated(config_file):
    path = config_file()
    with pytest.raises(ConfigError, match=r"botchat\.n"):
        load_config(path, {"n": [2]}, root=REPO_ROOT)
    with pytest.raises(ConfigError, match="bot-q"):
        load_config(path, {"models": ["bot-q"]}, root=REPO_ROOT)
    with pytest.raises(ConfigError, match="unknown override"):
        load_config(path, {"temperature": 1.0}, root=REPO_ROOT)


def test_apply_overrides_does_not_mutate_input():
    raw = {"botchat": {"limit": 3}}
    out = apply_overrides(raw, {"limit": 9, "lake": "x"})
    assert out == {"botchat": {"limit": 9}, "lake": "x"}
    assert raw == {"botchat": {"limit": 3}}


@pytest.mark.parametrize("path", sorted((REPO_ROOT / "configs").glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_configs_parse(path, monkeypatch, capsys):
    monkeypatch.chdir(REPO_ROOT)
    config = load_config(path, root=REPO_ROOT)
    assert config.botchat.judge
    # validate may say "not runnable here" (1) when weights or endpoints are missing; never a config error (2).
    rc = main(["validate", "--config", str(path.relative_to(REPO_ROOT))])
    assert rc in (0, 1)
    assert "valid" in capsys.readouterr().out


def test_botchat_off_runs_no_botchat_stage(make_config, lake_dir, backend_calls):
    """A games-only config: BotChat has no stage in the run, calls no backend (and needs no judge)."""
    from dialogbench import registry
    from tests import stage_runner as stages

    config = make_config({"lake": str(lake_dir), "models": [{"name": "a", "backend": "scripted", "script": ["x"]}],
                          "botchat": {"enabled": False, "arena": {"enabled": True}, "gteval": {"enabled": True}}})
    assert config.botchat_models() == [] and registry.stages(config) == []
    assert stages.extract_seeds(config).detail == {"enabled": False}
    for plan in (stages.plan_unieval, stages.plan_arena, stages.plan_gteval):
        chunks, report = plan(config, "run")
        assert chunks == [] and report.detail == {"enabled": False}
    assert backend_calls == {} and not lake_dir.exists()


@pytest.mark.parametrize("section", ["botchat", "mtbench101", "gameeval"])
def test_a_family_runs_when_its_section_is_present_and_not_disabled(make_config, lake_dir, section):
    """`enabled` means the same for every family: a section present runs (default true), absent or
    `enabled: false` does not, and a family that does not run has no stage (so no `runs` row)."""
    from dialogbench import registry

    base = {"lake": str(lake_dir), "models": [{"name": "a", "backend": "scripted", "script": ["x"]}]}
    judge = {"judge": "a"} if section != "gameeval" else {}
    families = lambda cfg: {f.name for f in registry.families() if f.enabled(cfg)}  # noqa: E731
    assert families(make_config(base)) == set()
    assert families(make_config({**base, section: dict(judge)})) == {section}
    off = make_config({**base, section: {"enabled": False, **judge}})
    assert families(off) == set() and registry.stages(off) == []


def test_cli_overrides_reach_every_family(make_config, lake_dir):
    """--limit / --models / --judge set every family section that has the field; --n only BotChat's."""
    from dialogbench.config import apply_overrides

    raw = {"botchat": {}, "mtbench101": {}, "gameeval": {"spyfall": {"trials": 2}}}
    out = apply_overrides(raw, {"limit": 3, "models": ["a"], "judge": "j", "n": [4]})
    assert out["botchat"] == {"limit": 3, "models": ["a"], "judge": "j", "n": [4]}
    assert out["mtbench101"] == {"limit": 3, "models": ["a"], "judge": "j"}
    assert out["gameeval"] == {"models": ["a"], "askguess": {"limit": 3}, "spyfall": {"trials": 2, "limit": 3}}
    assert apply_overrides({"models": []}, {"limit": 3}) == {"models": []}  # no section is created


@pytest.mark.parametrize("gameeval,message", [
    ({"models": ["nope"]}, "gameeval.models: 'nope' is not in models"),
    ({"spyfall": {"pairs": [["a", "zz"]]}}, "gameeval.spyfall.pairs[0]: 'zz' is not one of the gameeval models"),
    ({"tofukingdom": {"assignments": [{"prince": "a", "queen": "a"}]}}, "name a model for each camp"),
    ({"askguess": {"settings": ["sideways"]}}, "gameeval.askguess.settings[0]"),
    ({"temperature": -1}, "gameeval.temperature"),
])
def test_gameeval_config_errors_name_the_field(make_config, lake_dir, gameeval, message):
    data = {"lake": str(lake_dir), "models": [{"name": "a", "backend": "scripted", "script": ["x"]}],
            "botchat": {"enabled": False}, "gameeval": {"enabled": True, **gameeval}}
    with pytest.raises(ConfigError, match=re.escape(message)):
        make_config(data)
