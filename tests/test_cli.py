"""The CLI: query and catalog over a lake, config errors reported (exit 2) before Prefect starts."""

from __future__ import annotations

import json
import sys
import time

import duckdb
import pytest

from tests import stage_runner as stages
from dialogbench.cli import main
from tests.conftest import config_dict


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


def test_catalog_is_readable_by_plain_duckdb(make_config, pipeline, capsys):
    config = make_config(limit=2, n=[4])
    pipeline(config)
    assert main(["catalog", "--lake", config.lake]) == 0
    path = capsys.readouterr().out.strip()
    assert path.endswith("catalog.duckdb")
    with duckdb.connect(path, read_only=True) as con:
        rows = con.execute("select model, n, dialogues from botchat_unieval order by model, n").fetchall()
        assert rows == [("bot-a", 3, 2), ("bot-a", 4, 2), ("bot-b", 3, 2), ("bot-b", 4, 2)]
        assert con.execute("select count(*) from seeds").fetchall() == [(547,)]
        assert con.execute("select count(*) from generations").fetchall() == [(4,)]


def test_catalog_reads_current_files(make_config, pipeline, capsys):
    """The catalog's views read the Parquet files, so it sees cells written after it was built."""
    config = make_config(limit=2, n=[4])
    pipeline(config)
    assert main(["catalog", "--lake", config.lake]) == 0
    path = capsys.readouterr().out.strip()
    pipeline(make_config(limit=3, n=[4]), "run-2")
    with duckdb.connect(path, read_only=True) as con:
        assert con.execute("select count(*) from generations").fetchall() == [(6,)]


def test_config_error_exits_2_before_prefect(config_file, lake_dir, capsys, monkeypatch):
    data = config_dict(lake_dir, n=[2])
    bad = config_file(data)
    # Importing Prefect (or the flow) would now fail loudly: the config must be rejected first.
    for name in ("prefect", "flows.botchat", "flows"):
        monkeypatch.setitem(sys.modules, name, None)
    start = time.perf_counter()
    assert main(["run", "--config", str(bad)]) == 2
    assert time.perf_counter() - start < 5
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert str(bad) in err and "botchat.n" in err
    assert not lake_dir.exists()  # nothing written


def test_override_error_exits_2(config_file, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "prefect", None)
    path = config_file()
    assert main(["run", "--config", str(path), "--models", "bot-a,nope"]) == 2
    assert capsys.readouterr().err == f"error: --models: 'nope' is not a model of {path} (bot-a, bot-b)\n"


def test_missing_config_exits_2(tmp_path, capsys):
    assert main(["validate", "--config", str(tmp_path / "none.yaml")]) == 2
    assert "config file not found" in capsys.readouterr().err


def test_validate_a_scripted_config(config_file, capsys):
    assert main(["validate", "--config", str(config_file()), "--limit", "5", "--n", "4,6"]) == 0
    out = capsys.readouterr().out
    assert "valid (2 models; families: botchat; 6 stages; board: config+limit=5+n=4,6; checks: judge_checks)" in out


@pytest.mark.parametrize("value", ["0", "-3", "x", "3601"])
def test_a_bad_stop_timeout_is_a_usage_error(config_file, capsys, value):
    with pytest.raises(SystemExit) as info:
        main(["run", "--config", str(config_file()), "--stop-timeout", value])
    assert info.value.code == 2 and "--stop-timeout" in capsys.readouterr().err


def test_the_stop_timeout_is_a_config_field_the_flag_overrides_without_a_board_of_its_own(config_file, lake_dir,
                                                                                          capsys):
    from dialogbench.run.registry import load_config

    path = config_file({**config_dict(lake_dir), "stop_timeout_s": 45})
    assert load_config(path).stop_timeout_s == 45
    overridden = load_config(path, {"stop_timeout_s": 5.5})
    assert overridden.stop_timeout_s == 5.5 and overridden.board == "config"  # a stop changes no result
    bad = config_file({**config_dict(lake_dir), "stop_timeout_s": 0})
    assert main(["validate", "--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "stop_timeout_s" in err


def test_bad_n_flag_is_a_usage_error(config_file):
    with pytest.raises(SystemExit) as info:
        main(["validate", "--config", str(config_file()), "--n", "4,x"])
    assert info.value.code == 2


@pytest.mark.parametrize("command", [["query", "select 1"], ["export", "select 1", "--out", "x.csv"], ["catalog"],
                                     ["report"]])
def test_readers_refuse_a_lake_that_does_not_exist(tmp_path, capsys, command):
    """A typo in --lake answers with an error naming the path, not 0 rows or an empty report; nothing is created."""
    missing = tmp_path / "no-such-lake"
    assert main([*command, "--lake", str(missing)]) == 2
    err = capsys.readouterr().err
    assert f"{missing}: no lake here" in err and "Traceback" not in err
    assert not missing.exists()
