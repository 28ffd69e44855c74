"""Config errors that teach (dialogbench/run/config.py): a misspelled key says the key it likely is, else the keys
allowed there; a config file that is not there names the closest YAML file of its folder; ``fail_on`` (any by
default, or a share) names the field it got wrong."""

from __future__ import annotations


import pytest
import yaml

from dialogbench.run.config import ConfigError, FailOn
from dialogbench.run.registry import load_config
from tests.conftest import REPO_ROOT, config_dict, written_config


def config_error(config_file, data) -> tuple[list[str], str]:
    path = config_file(data)
    with pytest.raises(ConfigError) as info:
        load_config(path, root=REPO_ROOT)
    return str(info.value).splitlines(), str(path)


# -- unknown keys: the closest allowed key, else the allowed keys ---------------------------------------------------

def test_a_misspelled_section_key_names_the_key_it_likely_is(config_file, lake_dir):
    data = config_dict(lake_dir)
    data["botchat"]["limt"] = data["botchat"].pop("limit")
    lines, path = config_error(config_file, data)
    assert lines == [f"{path}: botchat.limt: unknown key; did you mean 'limit'?"]


@pytest.mark.parametrize("where, key, meant", [
    (("models", 0), "max_tokenz", "max_tokens"),
    (("models", 1, "sampling"), "temprature", "temperature"),
    (("judges", 0), "Script", "script"),
])
def test_misspelled_keys_of_models_say_the_field_at_their_depth(config_file, lake_dir, where, key, meant):
    data = config_dict(lake_dir)
    node = data
    for part in where:
        node = node.setdefault(part, {}) if isinstance(part, str) else node[part]
    node[key] = node.pop(meant, 1 if meant != "temperature" else 0.0)
    lines, path = config_error(config_file, data)
    field = "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else p) for i, p in enumerate(where))
    assert f"{path}: {field}.{key}: unknown key; did you mean {meant!r}?" in lines
    assert not any("Extra inputs are not permitted" in line for line in lines)


def test_a_key_like_no_other_lists_the_allowed_keys(config_file, lake_dir):
    data = config_dict(lake_dir)
    data["models"][0]["zzzqqq"] = 1
    lines, path = config_error(config_file, data)
    [line] = lines
    assert line.startswith(f"{path}: models[0].zzzqqq: unknown key (allowed keys: name, backend, weights, ")
    assert "max_tokens" in line and "did you mean" not in line


def test_a_misspelled_top_level_key_is_named_even_when_the_models_are_missing(config_file, lake_dir):
    data = config_dict(lake_dir)
    data["modles"] = data.pop("models")
    lines, path = config_error(config_file, data)
    assert lines[0] == f"{path}: modles: unknown key; did you mean 'models'?"
    assert f"{path}: models: Field required" in lines


def test_an_unknown_top_level_key_is_said_once_with_its_suggestion(config_file, lake_dir):
    data = config_dict(lake_dir)
    data["mtbench"] = {"enabled": True}  # the family is mtbench101
    data["qqq_zzz"] = 1
    lines, path = config_error(config_file, data)
    assert lines[0] == f"{path}: mtbench: unknown key; did you mean 'mtbench101'?"
    assert lines[1].startswith(f"{path}: qqq_zzz: unknown key (top-level keys: lake, board, models, judges, ")
    assert "family sections: botchat, mtbench101" in lines[1]
    assert len(lines) == 2 and not any("unknown section" in line for line in lines)


def test_other_errors_keep_their_shape(config_file, lake_dir):
    data = config_dict(lake_dir)
    data["models"][0]["backend"] = "llamacpp"
    lines, path = config_error(config_file, data)
    assert lines == [f"{path}: models[0].backend: unknown backend 'llamacpp' (expected one of: transformers, vllm, "
                     "openai, scripted)"]


# -- a config file that is not there -------------------------------------------------------------------------------

def test_a_missing_config_names_the_closest_yaml_file_of_its_folder(tmp_path, lake_dir):
    folder = tmp_path / "configs"
    folder.mkdir()
    (folder / "demo.yaml").write_text(yaml.safe_dump(config_dict(lake_dir)))
    (folder / "nightly.yaml").write_text("{}\n")
    (folder / "demo.json").write_text("{}\n")
    with pytest.raises(ConfigError) as info:
        load_config(folder / "demo.yml", root=REPO_ROOT)
    assert str(info.value) == f"{folder / 'demo.yml'}: config file not found; did you mean {folder / 'demo.yaml'}?"
    with pytest.raises(ConfigError) as info:
        load_config(folder / "qqqq.yaml", root=REPO_ROOT)
    assert str(info.value) == (f"{folder / 'qqqq.yaml'}: config file not found (YAML files in {folder}: demo.yaml, "
                               "nightly.yaml)")
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "configz" / "demo.yaml", root=REPO_ROOT)
    assert str(info.value) == f"{tmp_path / 'configz' / 'demo.yaml'}: config file not found (no folder " \
                              f"{tmp_path / 'configz'})"


# -- fail_on: any failed cell by default, or a share of each stage's tried cells ------------------------------------


def test_config_default_and_share(tmp_path):
    assert load_config(written_config(tmp_path)).fail_on == FailOn(cells="any")
    config = load_config(written_config(tmp_path, fail_on={"cells": "share", "share": 0.2}))
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
        load_config(written_config(tmp_path, fail_on=fail_on))
    assert message in str(error.value) and "c.yaml" in str(error.value)
