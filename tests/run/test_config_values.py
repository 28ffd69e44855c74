"""What a config holds, beyond its size (tests/run/test_config_bounds.py): a control character written raw is one line
naming the file, line and byte; every number is finite (``.inf`` / ``.nan`` parse as floats in YAML) and a price is
bounded; the board, whichever way it is named (``board:``, ``--board``, the file's name), is a board name, and the
file's name reaches Prefect's tags only in its safe characters."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from dialogbench.run import registry
from dialogbench.cli import main
from dialogbench.run.config import ConfigError
from dialogbench.run.registry import load_config
from dialogbench.run.runs import run_tags
from dialogbench.text.yamlbounds import load_yaml_text
from tests.conftest import REPO_ROOT, chatbot, config_dict

FORBIDDEN_RAW = {"\x00": "the byte 0x00", "\x1b": "the byte 0x1b", "\x07": "the byte 0x07", "\x7f": "the byte 0x7f",
                 "\ufffe": "the character U+FFFE"}


@pytest.mark.parametrize("char", FORBIDDEN_RAW)
def test_a_control_character_written_raw_is_one_line_naming_file_line_and_byte(tmp_path, capsys, char):
    """Before, PyYAML's ReaderError escaped as a traceback (exit 1) from validate and run."""
    text = yaml.safe_dump(config_dict(tmp_path / "lake"), sort_keys=False).replace("judges:", f"# a{char}b\njudges:")
    line = text.splitlines().index(f"# a{char}b") + 1
    path = tmp_path / "config.yaml"
    path.write_text(text)
    expected = f"{path}:{line}: {FORBIDDEN_RAW[char]}"
    with pytest.raises(ConfigError) as refused:
        load_config(path, root=REPO_ROOT)
    assert str(refused.value).startswith(expected) and char not in str(refused.value)
    with pytest.raises(ValueError, match="is not allowed in YAML"):
        load_yaml_text(f"a: 1\nb: x{char}\n", "x.yaml")
    assert main(["validate", "--config", str(path)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"error: {str(refused.value)}"]


def test_an_escape_in_a_quoted_string_is_still_text():
    assert load_yaml_text('a: "\\x1b[31m"\n', "x.yaml") == {"a": "\x1b[31m"}


@pytest.mark.parametrize("where, value, named", [
    ("prices", {"prompt_per_million": float("inf"), "completion_per_million": 1.0},
     "models[0].prices.prompt_per_million: Input should be a finite number"),
    ("prices", {"prompt_per_million": 1.0, "completion_per_million": float("nan")},
     "models[0].prices.completion_per_million: Input should be a finite number"),
    ("prices", {"prompt_per_million": 2e6, "completion_per_million": 1.0},
     "models[0].prices.prompt_per_million: Input should be less than or equal to 1000000"),
    ("prices", {"prompt_per_million": -1.0, "completion_per_million": 1.0},
     "models[0].prices.prompt_per_million: Input should be greater than or equal to 0"),
    ("timeout_s", float("inf"), "models[0].timeout_s: Input should be a finite number"),
    ("engine", {"vllm": {"gpu_memory_utilization": [0.5, float("-inf")]}},
     "models[0].engine: vllm.gpu_memory_utilization[1]: -inf is not a finite number"),
])
def test_every_number_is_finite_and_a_price_bounded(config_file, tmp_path, where, value, named):
    path = config_file(config_dict(tmp_path / "lake", models=[chatbot("bot-a", **{where: value}), chatbot("bot-b")]))
    with pytest.raises(ConfigError, match="finite|less than|greater than") as refused:
        load_config(path, root=REPO_ROOT)
    assert f"{path}: {named}" in str(refused.value).splitlines()


def test_a_family_section_number_is_finite_too(make_config, tmp_path):
    data = config_dict(tmp_path / "lake")
    data["judge_checks"]["max_unparsed"] = float("nan")
    with pytest.raises(ConfigError, match=r"judge_checks.max_unparsed: Input should be a finite number"):
        make_config(data)


def named(tmp_path: Path, name: str, data: dict | None = None) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data or config_dict(tmp_path / "lake"), sort_keys=False))
    return path


@pytest.mark.parametrize("name", ["de\x1bmo.yaml", "bell\x07.yaml", "my demo.yaml", "+plus.yaml", "naïve.yaml"])
def test_a_board_taken_from_the_file_name_is_checked(tmp_path, capsys, name):
    """Before, the stem became the board unchecked, and ESC or BEL reached Prefect's tags and the lake's rows."""
    path = named(tmp_path, name)
    stem = Path(name).stem
    with pytest.raises(ConfigError, match=r"board \(the config file's name; set board: in the config, or pass "
                                          r"--board\): .* is not a board name") as refused:
        load_config(path, root=REPO_ROOT)
    assert repr(stem) in str(refused.value)
    assert load_config(path, {"board": "nightly"}, root=REPO_ROOT).board == "nightly"
    (tmp_path / "declared").mkdir()
    declared = named(tmp_path / "declared", name, {**config_dict(tmp_path / "lake"), "board": "ok"})
    assert load_config(declared, root=REPO_ROOT).board == "ok"
    assert main(["validate", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "\x1b" not in err and "\x07" not in err


def test_a_board_from_a_flag_or_the_config_is_checked_the_same_way(tmp_path):
    path = named(tmp_path, "demo.yaml")
    assert load_config(path, root=REPO_ROOT).board == "demo"
    with pytest.raises(ConfigError, match=r"--board: 'a\\x1bb' is not a board name"):
        load_config(path, {"board": "a\x1bb"}, root=REPO_ROOT)
    with pytest.raises(ConfigError, match="board"):
        load_config(named(tmp_path, "x.yaml", {**config_dict(tmp_path / "lake"), "board": "a\x07"}), root=REPO_ROOT)


def test_the_config_tag_keeps_only_the_file_names_safe_characters(tmp_path):
    config = load_config(named(tmp_path, "de\x1bmo\x07.yaml"), {"board": "ok"}, root=REPO_ROOT)
    tags = run_tags(config, str(tmp_path / "de\x1bmo\x07.yaml"), ["botchat"], registry.stages(config))
    assert tags[:2] == ["config:de_mo_", "board:ok"]
