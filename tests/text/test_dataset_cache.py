"""A dataset is parsed once per version of its file (dialogbench/text/jsonl.py, ``once_per_version``): a run builds its
stages and probes dozens of times, each reading the dataset; the same file returns the first result, an edited one is
read again, and a file that fails to read is never kept, so its next read reports its problems again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dialogbench.botchat.seeds import read_seeds
from dialogbench.text.jsonl import DatasetError, once_per_version, raise_if_any, records
from dialogbench.mtbench101.dataset import read_dialogues
from tests.run.test_preflight import RAW


def counting(calls: list[str]):
    @once_per_version
    def read(path):
        calls.append(str(path))
        problems: list[str] = []
        rows = tuple(record for _, record in records(path, problems))
        raise_if_any(problems, path=path, what="row(s)")
        return rows

    return read


def test_a_file_is_read_once_per_version(tmp_path: Path):
    calls: list[str] = []
    read = counting(calls)
    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1}\n')
    assert read(path) == ({"a": 1},) and read(path) is read(path) and len(calls) == 1
    path.write_text('{"a": 2}\n')  # the same size, a new version
    os.utime(path, ns=(1, 1))
    assert read(path) == ({"a": 2},) and len(calls) == 2
    path.write_text('{"a": 3}\n{"b": 4}\n')
    assert read(path) == ({"a": 3}, {"b": 4}) and len(calls) == 3


def test_a_file_that_fails_to_read_is_read_again(tmp_path: Path):
    calls: list[str] = []
    read = counting(calls)
    path = tmp_path / "rows.jsonl"
    path.write_text("not json\n")
    for _ in range(2):
        with pytest.raises(DatasetError, match=r"rows\.jsonl:1: not valid JSON"):
            read(path)
    assert len(calls) == 2
    with pytest.raises(FileNotFoundError):
        read(tmp_path / "missing.jsonl")


def test_the_dataset_readers_share_one_parse_per_file():
    dialogues = RAW / "mtbench101/mtbench101.jsonl"
    assert read_dialogues(dialogues) is read_dialogues(str(dialogues))
    assert isinstance(read_dialogues(dialogues), tuple) and len(read_dialogues(dialogues)) == 1388
    seeds = RAW / "botchat/mutual_test.jsonl"
    assert read_seeds(seeds) is read_seeds(seeds) and read_seeds(seeds).num_rows == 547
