"""``dialogbench run`` (dialogbench/commands/run.py) refuses what it cannot run before Prefect starts: a config
error, an override naming no model of the config, a local weights path that is not there are each one ``error:``
line and exit 2, with Prefect never imported and nothing written to the lake."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from dialogbench.cli import main
from tests.conftest import config_dict


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


def test_a_missing_local_weights_path_stops_run_before_prefect(config_file, lake_dir, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "prefect", None)  # any import of Prefect would fail the test
    data = config_dict(lake_dir)
    data["models"][0] = {"name": "bot-a", "backend": "transformers", "weights": "./no/such/weights"}
    assert main(["run", "--config", str(config_file(data))]) == 2
    err = capsys.readouterr().err
    assert "model 'bot-a': weights: weights path './no/such/weights' does not exist" in err
    assert not Path(lake_dir).exists() or not any(Path(lake_dir).iterdir())
