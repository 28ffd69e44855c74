"""A dataset cannot exhaust the machine: a line is read no further than 1 MB, its JSON no deeper than 32 levels nor
beyond 100,000 values, a file no larger than 64 MB (dialogbench/text/jsonl.py), and each problem names its file and line.
`validate` and `run` refuse such a dataset with exit 2 before Prefect starts; the CLI tests run under a 1 GiB
RLIMIT_AS and a timeout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from dialogbench.botchat.seeds import read_seeds
from dialogbench.botchat.unieval import load_examples
from dialogbench.gameeval.words import read_pairs, read_words
from dialogbench.text.jsonl import LIMITS, DatasetError, json_problem, records
from dialogbench.mtbench101.dataset import read_dialogues
from tests.conftest import chatbot, config_dict
from tests.limited import run_limited
from tests.run.test_preflight import RAW

SEEDS = RAW / "botchat/mutual_test.jsonl"
TEN_MB = 10_485_760


def seeds_with(tmp_path: Path, line: bytes, *, at: int = 3) -> Path:
    """The first four seeds with ``line`` put in as line ``at``."""
    good = SEEDS.read_bytes().splitlines()[:4]
    path = tmp_path / "seeds.jsonl"
    path.write_bytes(b"\n".join([*good[:at - 1], line, *good[at - 1:]]) + b"\n")
    return path


def long_line() -> bytes:
    return json.dumps({"index": "MT-9001", "conv-GT": ["Hi.", "x" * TEN_MB]}).encode()


def deep_line(depth: int = 10_000) -> bytes:
    return b'{"index": "MT-9001", "conv-GT": ' + b"[" * depth + b"]" * depth + b"}"


# -- the readers ---------------------------------------------------------------------------------------------------

def test_a_10_mb_line_is_named_with_its_size_and_the_other_lines_still_checked(tmp_path):
    path = seeds_with(tmp_path, long_line())
    with open(path, "ab") as handle:
        handle.write(b"not json\n")
    with pytest.raises(DatasetError) as info:
        read_seeds(path)
    assert str(info.value).splitlines() == [
        f"2 malformed row(s) in {path}:", f"  {path}:3: line of 10.5 MB, over the 1 MB limit",
        f"  {path}:6: not valid JSON (Expecting value)"]


def test_nesting_10000_deep_is_refused_before_json_recurses(tmp_path):
    path = seeds_with(tmp_path, deep_line())
    with pytest.raises(DatasetError, match=rf"^{path}:3: JSON nested deeper than 32 levels$"):
        read_seeds(path)


def test_too_many_values_on_a_line(tmp_path):
    line = json.dumps({"index": "MT-9001", "conv-GT": ["a"] * (LIMITS.values + 1)}).encode()
    path = seeds_with(tmp_path, line, at=2)
    with pytest.raises(DatasetError, match=rf"^{path}:2: more than 100,000 JSON values$"):
        read_seeds(path)


def test_a_file_over_64_mb_is_refused_unread(tmp_path):
    path = tmp_path / "huge.jsonl"
    with open(path, "wb") as handle:
        handle.truncate(65_000_000)  # sparse: nothing is written, nothing may be read
    with pytest.raises(DatasetError, match=rf"^{path}: a file of 65 MB, over the 64 MB limit for a dataset file$"):
        list(records(path, []))


def test_every_reader_is_bounded(tmp_path):
    """MT-Bench-101's dialogues, the UniEval examples, the Ask-Guess words and the SpyFall pairs."""
    mt = tmp_path / "mt.jsonl"
    mt.write_bytes(RAW.joinpath("mtbench101/mtbench101.jsonl").read_bytes().splitlines()[0] + b"\n" + deep_line()
                   + b"\n")
    with pytest.raises(DatasetError, match=rf"^{mt}:2: JSON nested deeper than 32 levels$"):
        read_dialogues(mt)
    examples = tmp_path / "examples.json"
    examples.write_text('[\n  {"conv": "x",\n   "choice": ' + "[" * 100 + "]" * 100 + "}]")
    with pytest.raises(DatasetError, match=rf"^{examples}:3: JSON nested deeper than 32 levels$"):
        load_examples(examples)
    examples.write_text(json.dumps(["x" * 2_000_000]))
    with pytest.raises(DatasetError, match=rf"^{examples}: over the 1 MB limit for a JSON file$"):
        load_examples(examples)
    words = tmp_path / "words.json"
    words.write_text(json.dumps(["apple"] * (LIMITS.values + 1)))
    with pytest.raises(DatasetError, match=rf"^{words}:1: more than 100,000 JSON values$"):
        read_words(words)
    pairs = tmp_path / "pairs.txt"
    pairs.write_bytes(b"cat,dog\n" + b"a" * 2_000_000 + b",b\n")
    with pytest.raises(DatasetError, match=rf"^{pairs}:2: line of 2 MB, over the 1 MB limit$"):
        read_pairs(pairs)


def test_the_vendored_data_is_far_inside_the_bounds():
    for path in (SEEDS, RAW / "mtbench101/mtbench101.jsonl"):
        problems: list[str] = []
        assert sum(1 for _ in records(path, problems)) in (547, 1388) and problems == []
    text = RAW.joinpath("mtbench101/mtbench101.jsonl").read_text()
    assert json_problem(text.replace("\n", ",")) is None  # the whole file as one line: still within both


def test_a_line_of_exactly_the_limit_is_read(tmp_path):
    body = json.dumps({"index": "MT-9001", "conv-GT": ["Hi.", ""]})
    line = body[:-3] + "y" * (LIMITS.line_bytes - len(body)) + body[-3:]
    assert len(line.encode()) == LIMITS.line_bytes
    path = seeds_with(tmp_path, line.encode(), at=5)
    assert read_seeds(path).num_rows == 5


# -- the CLI: exit 2, the file and line, under a memory limit ------------------------------------------------------

def _config(tmp_path: Path, dataset: Path) -> Path:
    data = config_dict(tmp_path / "lake", models=[chatbot("bot-a")], limit=1, n=[4], dataset=str(dataset),
                       unieval_examples=str(RAW / "botchat/unieval_examples.json"))
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize("bad, problem", [(long_line, "3: line of 10.5 MB, over the 1 MB limit"),
                                          (deep_line, "3: JSON nested deeper than 32 levels")],
                         ids=["10-MB-line", "10000-deep"])
def test_cli_refuses_the_dataset_naming_file_and_line(tmp_path, command, bad, problem):
    dataset = seeds_with(tmp_path, bad())
    config = _config(tmp_path, dataset)
    result, elapsed = run_limited([command, "--config", str(config)], tmp_path, memory=1 << 30)
    assert result.returncode == 2, (result.stdout[-2000:], result.stderr[-2000:])
    assert result.stderr == f"error: {config}: botchat.dataset: {dataset}:{problem}\n"
    assert "flow run" not in result.stdout and elapsed < 20
    assert not (tmp_path / "lake").exists()
