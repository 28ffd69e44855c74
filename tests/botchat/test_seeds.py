"""ChatSEED extraction from the vendored MuTual-Test file, and what a malformed file does."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests import stage_runner as stages
from dialogbench.botchat.seeds import DatasetError, read_seeds
from tests.conftest import DATASET, config_dict

GT_LENGTHS = {4: 55, 5: 22, 6: 26, 7: 23, 8: 19, 9: 16, 10: 21, 11: 18, 12: 7, 13: 7, 14: 3, 15: 5}


@pytest.fixture(scope="module")
def seeds():
    return read_seeds(DATASET)


def test_seed_count(seeds):
    assert seeds.num_rows == 547


def test_ground_truth_lengths(seeds):
    lengths = seeds.column("n_utterances").to_pylist()
    assert sum(n >= 4 for n in lengths) == 222
    assert dict(sorted(Counter(n for n in lengths if n >= 4).items())) == GT_LENGTHS


def test_seed_ids(seeds):
    ids = seeds.column("seed_id").to_pylist()
    assert all(i.startswith("MT-") and i[3:].isdigit() for i in ids)
    assert len(set(ids)) == len(ids)
    assert ids[:3] == ["MT-1", "MT-4", "MT-5"]
    numbers = [int(i[3:]) for i in ids]
    assert numbers == sorted(numbers)  # natural order: MT-2 before MT-10


def test_seed_is_first_two_utterances(seeds):
    rows = {json.loads(line)["index"]: json.loads(line)["conv-GT"] for line in DATASET.read_text().splitlines()}
    for row in seeds.to_pylist():
        assert row["seed"] == rows[row["seed_id"]][:2]
        assert row["dialogue"] == rows[row["seed_id"]]
        assert row["n_utterances"] == len(rows[row["seed_id"]])
    first = seeds.to_pylist()[0]
    assert first["seed"] == ["You look rather pale. Are you feeling well?",
                             "Not very. I was sick most of the night. I didn't sleep very well."]
    assert first["line"] == 1


def test_item_fingerprint_depends_on_the_seed(tmp_path, seeds):
    """Editing a seed changes its item fingerprint (so its cells are recomputed); others keep theirs."""
    lines = DATASET.read_text().splitlines()
    row = json.loads(lines[0])
    row["conv-GT"][1] = "Not at all."
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join([json.dumps(row), *lines[1:]]) + "\n")
    new = read_seeds(edited)
    old_fp, new_fp = seeds.column("item_fp").to_pylist(), new.column("item_fp").to_pylist()
    assert old_fp[0] != new_fp[0]
    assert old_fp[1:] == new_fp[1:]


def write_dataset(tmp_path: Path, extra_lines: list[str], *, keep: int = 5) -> Path:
    good = DATASET.read_text().splitlines()[:keep]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join([*good, *extra_lines]) + "\n")
    return path


@pytest.mark.parametrize("line, fragment", [
    ('{"index": "MT-9001", "conv-GT": "Hello there. How are you?"}', "'conv-GT' must be a list of strings"),
    ('{"index": "MT-9001", "conv-GT": ["Hi", 3]}', "'conv-GT' must be a list of strings"),
    ('{"index": "MT-9001"}', "'conv-GT' must be a list of strings"),
    ('{"index": "MT-9001", "conv-GT": ["Only one utterance."]}', "at least 2"),
    ('{"index": "MT-9001", "conv-GT": ["Hi", "   "]}', "at least 2"),
])
def test_malformed_row_names_file_line_and_id(tmp_path, line, fragment):
    path = write_dataset(tmp_path, [line])
    with pytest.raises(DatasetError) as info:
        read_seeds(path)
    message = str(info.value)
    assert f"{path}:6" in message
    assert "MT-9001" in message
    assert fragment in message


def test_bad_json_names_file_and_line(tmp_path):
    path = write_dataset(tmp_path, ['{"index": "MT-9001", "conv-GT": ["a", "b"'])
    with pytest.raises(DatasetError, match=rf"{path}:6: not valid JSON"):
        read_seeds(path)


def test_duplicate_id(tmp_path):
    first = DATASET.read_text().splitlines()[0]
    path = write_dataset(tmp_path, [first])
    with pytest.raises(DatasetError) as info:
        read_seeds(path)
    assert f"{path}:6: row 'MT-1': duplicate row id" in str(info.value)


def test_missing_index(tmp_path):
    path = write_dataset(tmp_path, ['{"conv-GT": ["a", "b"]}'])
    with pytest.raises(DatasetError, match=rf"{path}:6: missing 'index'"):
        read_seeds(path)


def test_all_problems_reported_together(tmp_path):
    path = write_dataset(tmp_path, ['{"index": "MT-9001", "conv-GT": ["a"]}', "not json",
                                    '{"index": "MT-9002", "conv-GT": 5}'])
    with pytest.raises(DatasetError) as info:
        read_seeds(path)
    message = str(info.value)
    assert message.startswith("3 malformed row(s)")
    assert f"{path}:6" in message and f"{path}:7" in message and f"{path}:8" in message


def test_blank_lines_are_skipped_and_lines_still_counted(tmp_path):
    lines = DATASET.read_text().splitlines()[:3]
    path = tmp_path / "blank.jsonl"
    path.write_text(lines[0] + "\n\n" + lines[1] + "\n   \n" + lines[2] + "\n")
    table = read_seeds(path)
    assert table.column("line").to_pylist() == [1, 3, 5]


def lake_snapshot(lake: Path) -> dict[str, bytes]:
    return {str(p.relative_to(lake)): p.read_bytes() for p in sorted(lake.rglob("*")) if p.is_file()}


def test_malformed_dataset_leaves_the_lake_untouched(make_config, lake_dir, tmp_path, pipeline):
    pipeline(make_config(limit=2, n=[4]))
    before = lake_snapshot(lake_dir)
    assert any(name.startswith("seeds/") for name in before)
    assert any(name.startswith("generations/") for name in before)

    bad = write_dataset(tmp_path, ['{"index": "MT-9001", "conv-GT": ["only one"]}'])
    config = make_config(config_dict(lake_dir, limit=2, n=[4], dataset=str(bad)))
    with pytest.raises(DatasetError, match="MT-9001"):
        stages.extract_seeds(config)
    assert lake_snapshot(lake_dir) == before
