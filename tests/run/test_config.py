"""Config errors stop before any compute, with a message that names the file and the field."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from dialogbench.run import registry
from dialogbench.cli import main
from dialogbench.run.config import ConfigError, apply_overrides
from dialogbench.run.registry import load_config
from dialogbench.botchat.config import chatbots
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


@pytest.mark.parametrize("index, model, named", [
    (0, {"name": "bot-a", "backend": "llamacpp", "weights": "x"}, ["models[0].backend", "llamacpp"]),
    (1, {"name": "bot-b", "backend": "transformers"}, ["models[1]", "weights"]),
], ids=["unknown_backend", "transformers_without_weights"])
def test_a_bad_model_is_named_with_its_field(config_file, lake_dir, index, model, named):
    data = config_dict(lake_dir)
    data["models"][index] = model
    message, path = config_error(config_file, data)
    assert path in message
    for word in named:
        assert word in message


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
    config = make_config(overrides={"limit": 2, "models": ["bot-b"], "n": [5, 3], "judge": "bot-a",
                                    "lake": str(other_lake)})
    assert config.botchat.limit == 2  # the config's 3, narrowed
    assert [m.name for m in chatbots(config)] == ["bot-b"]
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
    raw = {"botchat": {"limit": 3}, "gameeval": {"spyfall": {"pairs": [["a", "b"]]}}}
    out = apply_overrides(raw, {"limit": 2, "lake": "x", "models": ["a"]}, families=registry.families())
    assert out.raw["botchat"] == {"limit": 2, "models": ["a"]} and out.raw["lake"] == "x"
    assert out.raw["gameeval"]["spyfall"] == {"pairs": [], "enabled": False, "limit": 2}
    assert raw == {"botchat": {"limit": 3}, "gameeval": {"spyfall": {"pairs": [["a", "b"]]}}}


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
    from dialogbench.run import registry
    from tests import stage_runner as stages

    config = make_config({"lake": str(lake_dir), "models": [{"name": "a", "backend": "scripted", "script": ["x"]}],
                          "botchat": {"enabled": False, "arena": {"enabled": True}, "gteval": {"enabled": True}}})
    assert chatbots(config) == [] and registry.stages(config) == []
    assert stages.extract_seeds(config).detail == {"enabled": False}
    for plan in (stages.plan_unieval, stages.plan_arena, stages.plan_gteval):
        chunks, report = plan(config, "run")
        assert chunks == [] and report.detail == {"enabled": False}
    assert backend_calls == {} and not lake_dir.exists()


@pytest.mark.parametrize("section", ["botchat", "mtbench101", "gameeval"])
def test_a_family_runs_when_its_section_is_present_and_not_disabled(make_config, lake_dir, section):
    """`enabled` means the same for every family: a section present runs (default true), absent or
    `enabled: false` does not, and a family that does not run has no stage (so no `runs` row). The judge checks are
    the one family every config has (Family.always): its section has its defaults when absent."""
    from dialogbench.run import registry

    base = {"lake": str(lake_dir), "models": [{"name": "a", "backend": "scripted", "script": ["x"]}],
            "judge_checks": {"enabled": False}}
    judge = {"judge": "a"} if section != "gameeval" else {}
    families = lambda cfg: {f.name for f in registry.families() if f.enabled(cfg)}  # noqa: E731
    assert families(make_config({k: v for k, v in base.items() if k != "judge_checks"})) == {"judge_checks"}
    assert families(make_config(base)) == set()
    assert families(make_config({**base, section: dict(judge)})) == {section}
    off = make_config({**base, section: {"enabled": False, **judge}})
    assert families(off) == set() and registry.stages(off) == []


def test_cli_overrides_reach_every_family(make_config, lake_dir):
    """--limit / --models / --judge set every family section that has the field; --n only BotChat's."""
    from dialogbench.run.config import apply_overrides

    raw = {"botchat": {}, "mtbench101": {}, "gameeval": {"spyfall": {"trials": 2}}}
    out = apply_overrides(raw, {"limit": 3, "models": ["a"], "judge": "j", "n": [4]}, families=registry.families()).raw
    assert out["botchat"] == {"limit": 3, "models": ["a"], "judge": "j", "n": [4]}
    assert out["mtbench101"] == {"limit": 3, "models": ["a"], "judge": "j"}
    assert out["gameeval"] == {"models": ["a"], "askguess": {"limit": 3}, "spyfall": {"trials": 2, "limit": 3}}
    # no section is created
    assert apply_overrides({"models": []}, {"limit": 3}, families=registry.families()).raw == {"models": []}


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


# --limit and --models narrow what the config runs; they never add to it.

def three_families(lake_dir, models=("a", "b", "c"), **sections) -> dict:
    """Scripted models, a judge, and a section of every family (each may be replaced by a keyword)."""
    data = {"lake": str(lake_dir), "models": [chatbot(name) for name in models],
            "judges": [{"name": "judge", "backend": "scripted", "script": ["Choice: No\nIndex: None\nReason: ok"]}],
            "botchat": {"judge": "judge", "n": [4], "limit": 3},
            "mtbench101": {"tasks": ["CM"], "limit": 1},
            "gameeval": {"askguess": {"limit": 2}}}
    data.update(sections)
    return data


@pytest.fixture(autouse=True)
def _unnoted(monkeypatch):
    """Override notes are logged once per process: each test starts with none logged."""
    monkeypatch.setattr("dialogbench.run.config._NOTED", set())


def test_limit_never_raises_a_limit_the_config_sets(make_config, lake_dir):
    """Each field --limit maps becomes min(config value, K); a field the config leaves unlimited becomes K."""
    data = three_families(lake_dir)
    small = make_config(data, overrides={"limit": 2})
    assert (small.botchat.limit, small.mtbench101.limit) == (2, 1)
    assert (small.gameeval.askguess.limit, small.gameeval.spyfall.limit) == (2, 2)
    large = make_config(data, overrides={"limit": 10})
    assert (large.botchat.limit, large.mtbench101.limit) == (3, 1)
    assert (large.gameeval.askguess.limit, large.gameeval.spyfall.limit) == (2, 10)
    with pytest.raises(ConfigError, match=r"^--limit: expected a positive integer, got 0$"):
        make_config(data, overrides={"limit": 0})


def test_no_flag_changes_nothing(make_config, config_file, lake_dir):
    data = three_families(lake_dir, botchat={"judge": "judge", "limit": 3, "arena": {"enabled": True,
                                                                                       "pairs": [["a", "b"]]}})
    unset = {"limit": None, "models": None, "n": None, "judge": None, "lake": None}
    assert apply_overrides(data, unset, families=registry.families()) == (data, [])
    assert make_config(data, overrides=unset) == make_config(data)


def test_models_keeps_the_config_order_in_every_family(make_config, lake_dir):
    config = make_config(three_families(lake_dir), overrides={"models": ["c", "a"]})
    from dialogbench.gameeval.config import players
    from dialogbench.mtbench101.config import answerers

    for family in (chatbots, answerers, players):
        assert [m.name for m in family(config)] == ["a", "c"]
    mine = make_config(three_families(lake_dir, mtbench101={"models": ["c", "b"]}), overrides={"models": ["a", "c"]})
    assert mine.mtbench101.models == ["c"]  # a family's own list, intersected, in its own order


def test_models_drops_the_pairs_and_assignments_naming_another_model(make_config, lake_dir, caplog):
    data = three_families(
        lake_dir,
        botchat={"judge": "judge", "arena": {"enabled": True, "pairs": [["a", "b"], ["a", "c"], ["c", "b"]]}},
        gameeval={"spyfall": {"pairs": [["a", "b"], ["b", "a"], ["c", "a"]]},
                  "tofukingdom": {"assignments": [{"prince": "a", "queen": "b", "spy": "c"},
                                                  {"prince": "b", "queen": "a", "spy": "b"}]}})
    with caplog.at_level("WARNING", logger="dialogbench.config"):
        config = make_config(data, overrides={"models": ["b", "a"]})
    assert config.botchat.arena.enabled and config.botchat.arena.pairs == [("a", "b")]
    assert config.gameeval.spyfall.enabled and config.gameeval.spyfall.pairs == [("a", "b"), ("b", "a")]
    assert config.gameeval.tofukingdom.assignments == [{"prince": "b", "queen": "a", "spy": "b"}]
    assert [r.getMessage() for r in caplog.records] == [
        "--models b,a: dropped 2 of 3 botchat.arena.pairs, 1 of 3 gameeval.spyfall.pairs, "
        "1 of 2 gameeval.tofukingdom.assignments naming other models"]


def test_models_turns_off_what_is_left_with_nothing_to_play_and_says_so_once(make_config, config_file, lake_dir,
                                                                             caplog):
    """The demo's shape: two models, an Arena and SpyFall on their defaults, one listed TofuKingdom assignment
    seating both. --models with one model plays no self-play the config did not ask for: those parts are off."""
    data = three_families(
        lake_dir, models=("a", "b"),
        botchat={"judge": "judge", "arena": {"enabled": True}, "gteval": {"enabled": True}},
        gameeval={"tofukingdom": {"assignments": [{"prince": "a", "queen": "b", "spy": "a"}]}})
    path = config_file(data)
    with caplog.at_level("WARNING", logger="dialogbench.config"):
        config = load_config(path, {"models": ["a"]}, root=REPO_ROOT)
        again = load_config(path, {"models": ["a"]}, root=REPO_ROOT)  # the flow loads it again: no second note
    assert again == config
    assert not config.botchat.arena.enabled and config.botchat.gteval.enabled
    assert not config.gameeval.spyfall.enabled and not config.gameeval.tofukingdom.enabled
    assert config.gameeval.askguess.enabled and config.enabled("mtbench101")
    assert [r.getMessage() for r in caplog.records] == [
        "--models a: turned off for this run: botchat.arena (by default its pairs seat 2 distinct models; the "
        "flag keeps 1 of botchat's); gameeval.spyfall (by default its pairs seat 2 distinct models; the flag keeps "
        "1 of gameeval's); gameeval.tofukingdom (each of its listed assignments names another model)"]


def test_models_leaves_a_default_the_config_itself_plays(make_config, lake_dir):
    """Self-play is what the defaults do with one model: kept when the config has one model, and TofuKingdom's
    default needs three distinct models only when the config has three."""
    alone = make_config(three_families(lake_dir, gameeval={"models": ["a"]}), overrides={"models": ["a", "b"]})
    assert alone.gameeval.spyfall.enabled and alone.gameeval.tofukingdom.enabled
    three = make_config(three_families(lake_dir), overrides={"models": ["a", "b"]})
    assert three.gameeval.spyfall.enabled and not three.gameeval.tofukingdom.enabled


def test_models_turns_off_a_family_that_plays_none_of_them(make_config, lake_dir, caplog):
    data = three_families(lake_dir, mtbench101={"models": ["b"], "tasks": ["CM"]},
                          gameeval={"enabled": False, "models": ["b"], "spyfall": {"pairs": [["b", "b"]]}})
    with caplog.at_level("WARNING", logger="dialogbench.config"):
        config = make_config(data, overrides={"models": ["a"]})
    assert not config.enabled("mtbench101") and config.enabled("botchat")
    assert config.gameeval.models == ["b"]  # a family that does not run is left as it is
    assert [r.getMessage() for r in caplog.records] == [
        "--models a: turned off for this run: mtbench101 (it plays none of them; its models: b)"]


@pytest.mark.parametrize("models,message", [
    (["a", "x"], "--models: 'x' is not a model of {path} (a, b, c)"),
    (["judge"], "--models: 'judge' is not a model of {path} (a, b, c); 'judge' is one of its judges: "
                "--judge picks the judge"),
])
def test_models_naming_no_model_of_the_config(config_file, lake_dir, capsys, monkeypatch, models, message):
    monkeypatch.setitem(__import__("sys").modules, "prefect", None)  # refused before Prefect starts
    path = config_file(three_families(lake_dir))
    assert main(["run", "--config", str(path), "--models", ",".join(models)]) == 2
    assert capsys.readouterr().err == f"error: {message.format(path=path)}\n"
    assert not lake_dir.exists()


@pytest.mark.parametrize("flags,message", [
    ({"n": [2]}, "--n 2: {path}: botchat.n: N must be >= 3"),
    ({"judge": "nope", "limit": 2}, "--judge nope: {path}: (top level): botchat.judge: 'nope' is not a configured"),
])
def test_an_error_a_flag_causes_names_the_flag(config_file, lake_dir, flags, message):
    path = config_file(three_families(lake_dir))
    with pytest.raises(ConfigError) as info:
        load_config(path, flags, root=REPO_ROOT)
    assert str(info.value).startswith(message.format(path=path))


def test_the_readme_quick_command_loads(monkeypatch):
    """`run --config configs/demo.yaml --limit 4 --models smollm2-135m --n 4,8`: the demo narrowed, not widened."""
    monkeypatch.chdir(REPO_ROOT)
    demo = load_config("configs/demo.yaml", root=REPO_ROOT)
    quick = load_config("configs/demo.yaml", {"limit": 4, "models": ["smollm2-135m"], "n": [4, 8]}, root=REPO_ROOT)
    assert (quick.botchat.limit, quick.mtbench101.limit) == (4, demo.mtbench101.limit)
    assert (quick.gameeval.askguess.limit, quick.gameeval.spyfall.limit) == (2, 1)
    assert [m.name for m in chatbots(quick)] == ["smollm2-135m"] and quick.botchat.n == [4, 8]
    assert demo.botchat.arena.enabled and not quick.botchat.arena.enabled
    assert not quick.gameeval.spyfall.enabled and not quick.gameeval.tofukingdom.enabled
