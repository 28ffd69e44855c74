"""``dialogbench query`` (dialogbench/commands/querying.py): read-only SQL over a lake's views, as a table or JSON;
every view exists, typed and empty, before the first run."""

from __future__ import annotations

import json

import pytest

from tests import stage_runner as stages
from dialogbench.cli import main


@pytest.fixture
def extracted(make_config):
    config = make_config(limit=2, n=[4])
    stages.extract_seeds(config)
    return config


def test_query_counts_seeds(extracted, capsys):
    assert main(["query", "select count(*) as seeds from seeds", "--lake", extracted.lake]) == 0
    out = capsys.readouterr().out
    assert "547" in out


def test_query_json(extracted, capsys):
    sql = "select seed_id, n_utterances from seeds where seed_id in ('MT-1', 'MT-4') order by line"
    assert main(["query", sql, "--lake", extracted.lake, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"seed_id": "MT-1", "n_utterances": 4},
                                                    {"seed_id": "MT-4", "n_utterances": 7}]


def test_query_empty_tables_before_any_run(lake_dir, capsys):
    """Every view exists (typed and empty) before the first run; seeds only after extraction."""
    lake_dir.mkdir()
    sql = "select (select count(*) from generations) + (select count(*) from judgments) + (select count(*) from runs) as n"
    assert main(["query", sql, "--lake", str(lake_dir), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"n": 0}]
