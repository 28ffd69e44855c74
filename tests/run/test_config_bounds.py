"""A config cannot exhaust the machine: aliases, expanded nodes and text, depth, file size and string length are
bounded while the YAML is composed (dialogbench/text/yamlbounds.py), and `validate` and `run` refuse a config over a bound
with exit 2 and one line naming the file and line, before Prefect starts. The CLI tests run under a 1 GiB RLIMIT_AS
and a timeout, so a regression fails them instead of freezing the machine."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from dialogbench.run.config import ConfigError
from dialogbench.run.registry import load_config
from dialogbench.text.yamlbounds import LIMITS, YAMLBoundsError, load_yaml_text, read_yaml_file
from tests.conftest import REPO_ROOT, chatbot, config_dict
from tests.limited import run_limited

HEAD = "lake: {lake}\nmodels:\n  - name: bot-a\n    backend: scripted\n    script: [hi]\n"
TAIL = ("judges:\n  - {{name: judge, backend: scripted, script: ['Choice: No']}}\n"
        "botchat: {{judge: judge, n: [4], limit: 1, dataset: {seeds}, unieval_examples: {examples}}}\n")


def config_text(tmp_path: Path, model_extra: str = "") -> str:
    """A valid scripted config with ``model_extra`` (indented YAML lines) added to its model entry."""
    raw = REPO_ROOT / "data_lake/raw/botchat"
    return (HEAD.format(lake=tmp_path / "lake") + model_extra
            + TAIL.format(seeds=raw / "mutual_test.jsonl", examples=raw / "unieval_examples.json"))


def alias_bomb(levels: int = 9, width: int = 10) -> str:
    """``engine:`` holding the billion laughs: level k is ``width`` aliases of level k-1 (width**levels leaves).
    The first level starts on line 7 of ``config_text``."""
    lines = ["    engine:", f"      a0: &a0 [{', '.join(['lol'] * width)}]"]
    lines += [f"      a{k}: &a{k} [{', '.join([f'*a{k - 1}'] * width)}]" for k in range(1, levels)]
    return "\n".join(lines) + "\n"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


# -- the loader ---------------------------------------------------------------------------------------------------

def test_an_alias_bomb_is_refused_while_composing_at_the_line_that_crosses(tmp_path):
    text = config_text(tmp_path, alias_bomb(levels=40))  # 10**40 leaves: only a check on the graph survives it
    with pytest.raises(YAMLBoundsError) as info:
        load_yaml_text(text, "x.yaml")
    # a0 is line 7 and a_k holds 1 + 10 * size(a_{k-1}) nodes: a4 (line 11) is the first over 100,000
    assert str(info.value).startswith("x.yaml:11: the YAML expands to more than 100,000 nodes (aliases")
    assert info.value.line == 11


def test_aliases_within_bounds_read_as_before():
    """The shipped configs (demo.yaml shares its engine settings through an alias) read exactly as PyYAML reads them."""
    for name in ("demo.yaml", "nightly.yaml"):
        path = REPO_ROOT / "configs" / name
        assert read_yaml_file(path) == yaml.safe_load(path.read_text())


def test_more_aliases_than_the_bound(tmp_path):
    text = "a: &a x\nb: [" + ", ".join(["*a"] * (LIMITS.aliases + 1)) + "]\n"
    with pytest.raises(YAMLBoundsError, match=rf"^x.yaml:2: more than {LIMITS.aliases:,} aliases"):
        load_yaml_text(text, "x.yaml")


def test_expanded_text_is_bounded_as_well_as_nodes():
    """50 aliases of a 90,000-character string: few nodes, 4.5 million characters once expanded."""
    text = f"s: &s {'x' * 90_000}\nb: [" + ", ".join(["*s"] * 50) + "]\n"
    with pytest.raises(YAMLBoundsError, match=r"^x.yaml:2: the YAML expands to more than 4,000,000 characters"):
        load_yaml_text(text, "x.yaml")


def test_deep_nesting_is_refused_before_the_composer_recurses(tmp_path):
    text = "a: 1\nb: " + "[" * 10_000 + "]" * 10_000 + "\n"
    with pytest.raises(YAMLBoundsError, match=rf"^x.yaml:2: nested deeper than {LIMITS.depth} levels"):
        load_yaml_text(text, "x.yaml")


def test_a_long_string_is_refused():
    with pytest.raises(YAMLBoundsError, match=r"^x.yaml:3: a string of 200,000 characters, over the 100,000 limit"):
        load_yaml_text("a: 1\nb: 2\nc: " + "y" * 200_000 + "\n", "x.yaml")


def test_an_oversized_file_is_refused_unread(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("a: [" + "1, " * 700_000 + "1]\n")  # 2.1 MB
    with pytest.raises(YAMLBoundsError, match=rf"^{path}: a file of 2.1 MB, over the 1 MB limit for a config$"):
        read_yaml_file(path)


def test_other_problems_are_one_line_with_the_line_number(tmp_path):
    with pytest.raises(ValueError, match=r"^x.yaml:3: not valid YAML: .*found '<stream end>'$"):
        load_yaml_text("a: 1\nb: [\n", "x.yaml")
    with pytest.raises(ValueError, match=r"^x.yaml:2: not valid YAML: cannot read this value \(Exceeds"):
        load_yaml_text("a: 1\nb: " + "9" * 5_000 + "\n", "x.yaml")  # int() refuses 5,000 digits
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"a: 1\nb: caf\xe9\n")
    with pytest.raises(ValueError, match=rf"^{path}:2: not UTF-8 text \(byte 0xe9\)$"):
        read_yaml_file(path)


def test_load_config_reports_a_bound_as_a_config_error(tmp_path):
    path = write(tmp_path, config_text(tmp_path, alias_bomb()))
    with pytest.raises(ConfigError, match=rf"^{path}:11: the YAML expands to more than 100,000 nodes"):
        load_config(path)
    with pytest.raises(ConfigError, match=rf"^{tmp_path}: cannot read the config file"):
        load_config(tmp_path)


def test_a_config_at_the_real_scale_is_far_inside_the_bounds(tmp_path, config_file):
    """14 models with long scripts and an engine section each (the papers' scale): read, validated, no bound near."""
    data = config_dict(tmp_path / "lake", models=[
        chatbot(f"bot-{i}", [f"reply {j} " * 20 for j in range(200)], engine={"max_model_len": 4096, "dtype": "bf16"})
        for i in range(14)])
    config = load_config(config_file(data), root=REPO_ROOT)
    assert len(config.models) == 14


def test_the_flow_reads_its_config_within_the_same_bounds(tmp_path):
    """A deployment runs the flow without the CLI: its own load-config task refuses the bomb the same way."""
    from tasks.lifecycle import load_run_config

    path = write(tmp_path, config_text(tmp_path, alias_bomb()))
    with pytest.raises(ConfigError, match=rf"^{path}:11: the YAML expands to more than 100,000 nodes"):
        load_run_config.fn(str(path), {})


def test_readers_of_a_recorded_config_fall_back_rather_than_expand(tmp_path):
    """The report's and the judge checks' settings (read from run_configs.config) and the MT-Bench-101 explorer's
    dataset path (read from the run's config file) come from the same bounded loader: a bomb gives the defaults."""
    from dialogbench.judge_checks.check import settings_from_yaml
    from dialogbench.judge_checks.config import JudgeChecksConfig
    from dialogbench.mtbench101.explorer import VENDORED, candidates
    from dialogbench.report.checks import settings_from_run

    text = (config_text(tmp_path, alias_bomb(levels=40)) + "report: {min_cells: 3}\njudge_checks: {max_unparsed: 0.5}\n"
            "mtbench101: {dataset: x.jsonl}\n")  # each would be read, were the bomb not refused
    assert settings_from_run(text, "r1")[1] == "defaults"
    assert settings_from_run("report: {min_cells: 3}\n", "r1")[0].min_cells == 3  # a sane one is read
    assert settings_from_yaml(text) == JudgeChecksConfig()
    assert candidates(str(write(tmp_path, text))) == [VENDORED]


# -- the CLI: exit 2 in seconds, one line, under a memory limit ----------------------------------------------------

def _refused(result, elapsed: float, message: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stdout[-2000:], result.stderr[-2000:])
    assert result.stderr == f"error: {message}\n" or result.stderr.endswith(f"error: {message}\n"), result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert "flow run" not in result.stderr + result.stdout  # refused before Prefect started
    assert elapsed < 20, f"{elapsed:.1f}s"


@pytest.mark.parametrize("command", ["validate", "run"])
def test_cli_refuses_an_alias_bomb_in_engine(tmp_path, command):
    path = write(tmp_path, config_text(tmp_path, alias_bomb(levels=12)))
    result, elapsed = run_limited([command, "--config", str(path)], tmp_path)
    _refused(result, elapsed, f"{path}:11: the YAML expands to more than 100,000 nodes (aliases repeat what they "
                              "name: 40 of them so far)")
    assert not (tmp_path / "lake").exists()  # no lake, so no lease was ever taken


@pytest.mark.parametrize("command", ["validate", "run"])
def test_cli_refuses_a_deeply_nested_config(tmp_path, command):
    path = write(tmp_path, config_text(tmp_path, "    engine: {x: " + "[" * 10_000 + "]" * 10_000 + "}\n"))
    result, elapsed = run_limited([command, "--config", str(path)], tmp_path)
    _refused(result, elapsed, f"{path}:6: nested deeper than 64 levels")


@pytest.mark.parametrize("command", ["validate", "run"])
def test_cli_refuses_an_oversized_config(tmp_path, command):
    path = write(tmp_path, config_text(tmp_path, "    engine: {x: [" + "1, " * 1_000_000 + "1]}\n"))
    result, elapsed = run_limited([command, "--config", str(path)], tmp_path)
    _refused(result, elapsed, f"{path}: a file of 3 MB, over the 1 MB limit for a config")
