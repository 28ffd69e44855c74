"""``dialogbench validate`` (dialogbench/commands/checking.py): a valid config is one line with its counts in words
(models, families, stages, board, checks); a config file that is not there is exit 2, and the closest YAML file of
its folder is suggested as the path was typed."""

from __future__ import annotations

from dialogbench.cli import main
from tests.conftest import config_dict


def test_missing_config_exits_2(tmp_path, capsys):
    assert main(["validate", "--config", str(tmp_path / "none.yaml")]) == 2
    assert "config file not found" in capsys.readouterr().err


def test_validate_a_scripted_config(config_file, capsys):
    assert main(["validate", "--config", str(config_file()), "--limit", "5", "--n", "4,6"]) == 0
    out = capsys.readouterr().out
    assert "valid (2 models; families: botchat; 6 stages; board: config+limit=5+n=4,6; checks: judge_checks)" in out


def test_the_cli_says_the_suggestion_relative_as_typed(tmp_path, monkeypatch, capsys):
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "demo.yaml").write_text("{}\n")
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "--config", "configs/demo.yml"]) == 2
    assert capsys.readouterr().err == ("error: configs/demo.yml: config file not found; did you mean "
                                       "configs/demo.yaml?\n")


def test_validate_counts_in_words(config_file, lake_dir, capsys):
    data = config_dict(lake_dir, models=[{"name": "bot-a", "backend": "scripted", "script": ["hi"]}])
    assert main(["validate", "--config", str(config_file(data))]) == 0
    out = capsys.readouterr().out
    assert "valid (1 model; " in out and " stages; " in out
