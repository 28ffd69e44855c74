"""Errors that teach: a misspelled key or file name says what was likely meant, `--version`, help for every
positional argument, and a failed run's message as a short headline with one detail line per reason."""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml

from dialogbench.cli import HEADLINE_MAX, build_parser, failures_command, main, run_failed_lines
from dialogbench.run.config import ConfigError
from dialogbench.run.registry import load_config
from dialogbench.run.runs import StageReport, failure_lines
from tests.conftest import REPO_ROOT, config_dict


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


def test_the_cli_says_the_suggestion_relative_as_typed(tmp_path, monkeypatch, capsys):
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "demo.yaml").write_text("{}\n")
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "--config", "configs/demo.yml"]) == 2
    assert capsys.readouterr().err == ("error: configs/demo.yml: config file not found; did you mean "
                                       "configs/demo.yaml?\n")


# -- --version, and help for every positional argument -------------------------------------------------------------

def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"dialogbench {version('dialogbench')}\n"


def _parsers(parser: argparse.ArgumentParser, name: str = "dialogbench"):
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _parsers(sub, f"{name} {sub_name}")


def test_every_positional_argument_has_help():
    parsers = dict(_parsers(build_parser()))
    assert {"dialogbench query", "dialogbench export", "dialogbench labels import"} <= set(parsers)
    positionals = 0
    for name, parser in parsers.items():
        for action in parser._actions:
            if action.option_strings or isinstance(action, argparse._SubParsersAction):
                continue
            positionals += 1
            assert action.help and action.help.strip() and action.help != argparse.SUPPRESS, \
                f"{name}: {action.dest} has no help"
    assert positionals >= 3
    [sql] = [a for a in parsers["dialogbench query"]._actions if a.dest == "sql"]
    assert "select * from botchat_unieval" in sql.help


# -- a failed run (exit 4): a headline, one line per reason, a command to paste ------------------------------------

CANARY = ("judge canary: judge on botchat_unieval gave the first night's answer in 3 of 10 judgments (30% < 80%, "
          "canary.min_agreement): the judge drifted (see canary_judgments)")
JUDGE_CHECK = ("judge checks: judge on botchat_unieval cannot tell: right on 4 of 12 known-answer probes (33%; "
               "unieval 2/6; arena 2/6), under judge_checks.min_probe_accuracy 70%: its numbers are not measured")


def _stages() -> list[dict]:
    long = "botchat_generate_" + "x" * 40
    return [StageReport(long, planned=400, computed=300, failed=100).__dict__,
            StageReport("botchat_unieval", planned=100, computed=90, failed=10).__dict__,
            StageReport("mtbench101_answer", planned=50, computed=50).__dict__]


def _result(make_config, lake: str, board: str, problems: list[str]) -> tuple[dict, object]:
    config = make_config()
    stages = _stages()
    failed = "; ".join(failure_lines(stages, config.fail_on, problems))
    return {"run_id": "20260102T030405Z-abc123", "lake": lake, "board": board, "stages": stages, "failed": failed,
            "report": {"html": f"{lake}/reports/runs/x/report.html"}}, config


def test_a_failed_run_says_a_short_headline_then_one_line_per_reason(make_config, tmp_path):
    lake = str(tmp_path / "my lake")
    result, config = _result(make_config, lake, "config+limit=3", [JUDGE_CHECK, JUDGE_CHECK.replace("4 of", "5 of"),
                                                                    CANARY])
    assert len(result["failed"]) > 500  # what the message was: one line
    lines = run_failed_lines(result, config, result["failed"])
    headline, details = lines[0], lines[1:]
    assert len(headline) <= HEADLINE_MAX
    assert headline == ("error: run 20260102T030405Z-abc123 failed: 110 failed cells in 2 stages, 2 judge checks, "
                        "1 judge canary (details below)")
    assert all(line.startswith("  ") for line in details)
    assert details[0].strip() == f"{'botchat_generate_' + 'x' * 40}: 100 of 400 cells failed (25%)"
    assert details[1].strip() == "botchat_unieval: 10 of 100 cells failed (10%)"
    assert details[2].strip() == JUDGE_CHECK  # its own '; ' stays inside it
    assert details[3].strip() == JUDGE_CHECK.replace("4 of", "5 of")
    assert details[4].strip() == CANARY
    assert f"--lake '{lake}' --board config+limit=3 \"select * from failures\"" in details[5]
    assert details[6].strip() == f"report: {lake}/reports/runs/x/report.html"


def test_reasons_of_no_known_kind_are_counted_and_a_long_headline_still_fits(make_config, tmp_path):
    problems = [f"check number {i} of a family: failed" for i in range(12)]
    result, config = _result(make_config, str(tmp_path / "lake"), "config", problems)
    # reasons of no known kind are told apart by the flow's own list (joined, '; ' may be inside one)
    result["failed_lines"] = failure_lines(result["stages"], config.fail_on, problems)
    lines = run_failed_lines(result, config, result["failed"])
    assert lines[0] == ("error: run 20260102T030405Z-abc123 failed: 110 failed cells in 2 stages, 12 other reasons "
                        "(details below)")
    assert [line.strip() for line in lines[3:15]] == problems
    result["run_id"] = "r" * 90
    headline = run_failed_lines(result, config, result["failed"])[0]
    assert len(headline) <= HEADLINE_MAX and headline.startswith(f"error: run {'r' * 90} failed: ")


def test_only_family_checks_failing_needs_no_stage_line(make_config, tmp_path):
    config = make_config()
    result = {"run_id": "r1", "lake": str(tmp_path / "lake"), "board": "config",
              "stages": [StageReport("s", planned=3, computed=3).__dict__], "failed": CANARY, "report": None}
    lines = run_failed_lines(result, config, CANARY + " Report: http://box:8765/runs/r1/report.html")
    assert lines[0] == "error: run r1 failed: 1 judge canary (details below)"
    assert lines[1:] == [f"  {CANARY}", "  served report: http://box:8765/runs/r1/report.html"]


def test_the_failures_hint_keeps_the_runs_lake_and_ad_hoc_board(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert failures_command({"lake": str(tmp_path / "data_lake"), "board": "nightly"}) == \
        'dialogbench query "select * from failures"'
    assert failures_command({"lake": str(tmp_path / "lakes" / "a"), "board": "nightly"}) == \
        'dialogbench query --lake lakes/a "select * from failures"'
    assert failures_command({"lake": "/elsewhere/lake", "board": "demo+models=a,b"}) == \
        "dialogbench query --lake /elsewhere/lake --board demo+models=a,b \"select * from failures\""
    assert failures_command({"lake": "/my lakes/x", "board": "a+judge=j k"}) == \
        "dialogbench query --lake '/my lakes/x' --board 'a+judge=j k' \"select * from failures\""


def test_validate_counts_in_words(config_file, lake_dir, capsys):
    data = config_dict(lake_dir, models=[{"name": "bot-a", "backend": "scripted", "script": ["hi"]}])
    assert main(["validate", "--config", str(config_file(data))]) == 0
    out = capsys.readouterr().out
    assert "valid (1 model; " in out and " stages; " in out


def test_a_missing_local_weights_path_stops_run_before_prefect(config_file, lake_dir, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "prefect", None)  # any import of Prefect would fail the test
    data = config_dict(lake_dir)
    data["models"][0] = {"name": "bot-a", "backend": "transformers", "weights": "./no/such/weights"}
    assert main(["run", "--config", str(config_file(data))]) == 2
    err = capsys.readouterr().err
    assert "model 'bot-a': weights: weights path './no/such/weights' does not exist" in err
    assert not Path(lake_dir).exists() or not any(Path(lake_dir).iterdir())
