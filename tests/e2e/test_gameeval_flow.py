"""GameEval through the CLI and the Prefect flow (scripted players): a run killed mid-game keeps the finished games;
the rerun replays the rest, prints every game's table and writes the report; a rerun then plays nothing.

One test, three runs on one lake: each `dialogbench run` costs ~15 s of CPU before it plays anything, and the run
that completes a killed one is a run like any other (every game planned, the missing ones played, the tables
printed, the report written), so it also serves the checks a fresh run once had to itself. The players' pause
(``script_delay_s``) only places the kill mid-SpyFall: the runs after it go without (the pause is in no cell's key,
so the killed run's games are the same cells)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest
import yaml

from dialogbench.run.registry import open_lake
from dialogbench.lake.catalog import data_tests
from tests.e2e.conftest import REPO, cli_env, run_cli

pytestmark = pytest.mark.slow

MOVE = json.dumps({"thought": "I think player2 sounds odd", "speak": "It is something people use daily.",
                   "name": "player2", "question": 1, "ask": "player3"})


def games_config(tmp_path, *, delay: float = 0.0):
    config = {
        "lake": str(tmp_path / "lake"),
        "models": [{"name": n, "backend": "scripted", "script": [MOVE, "Is it a kind of animal?"],
                    "script_delay_s": delay} for n in ("bot-a", "bot-b")],
        "botchat": {"enabled": False},
        "gameeval": {"enabled": True, "askguess": {"limit": 3, "max_rounds": 3},
                     "spyfall": {"limit": 2, "max_rounds": 2}, "tofukingdom": {"trials": 1}},
    }
    path = tmp_path / "games.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


# 3 words x 2 settings x 2 models; 2 word pairs x 2 ordered pairs; 6 camp assignments of two models
EXPECTED = {"gameeval_askguess": 12, "gameeval_spyfall": 4, "gameeval_tofukingdom": 6}


def test_killed_mid_game_then_rerun_completes_reports_and_then_caches(tmp_path):
    config = games_config(tmp_path, delay=0.3)
    lake = open_lake(tmp_path / "lake")
    proc = subprocess.Popen([sys.executable, "-m", "dialogbench.cli", "run", "--config", str(config)], cwd=REPO,
                            env=cli_env(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 300

    def committed(table: str, where: str) -> int:
        try:
            return lake.read(table, where=where).num_rows
        except FileNotFoundError:  # no commit to the table yet
            return 0

    # Ask-Guess is written, SpyFall is being played
    while not committed("gameeval_games", "game = 'askguess'") or \
            not committed("plans", "stage = 'gameeval_spyfall'"):
        assert proc.poll() is None, "the run ended before the kill point"
        assert time.monotonic() < deadline, "kill point never reached"
        time.sleep(0.1)
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert lake.read("gameeval_games").num_rows == EXPECTED["gameeval_askguess"]

    games_config(tmp_path)  # the same config without the pause
    rerun = run_cli(["run", "--config", str(config), "--json", str(tmp_path / "r.json")], tmp_path)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    stages = {s["stage"]: s for s in json.loads((tmp_path / "r.json").read_text())["stages"]}
    assert {stage: (s["planned"], s["cached"], s["computed"]) for stage, s in stages.items() if stage in EXPECTED} == {
        "gameeval_askguess": (12, 12, 0),  # kept from the killed run
        "gameeval_spyfall": (4, 0, 4),  # the killed run's games in flight: replayed from the start
        "gameeval_tofukingdom": (6, 0, 6)}
    assert "GameEval Ask-Guess" in rerun.stdout and "GameEval SpyFall" in rerun.stdout
    assert "GameEval TofuKingdom" in rerun.stdout
    html = (tmp_path / "lake" / "reports" / "report.html").read_text()
    assert "GameEval" in html and "bot-a" in html
    for path in lake.root.rglob("*.parquet"):
        pq.read_table(path)
    games = lake.read("gameeval_games").to_pylist()
    assert len(games) == len({g["cell_key"] for g in games}) == sum(EXPECTED.values())
    assert data_tests(lake) == {}

    again = run_cli(["run", "--config", str(config), "--json", str(tmp_path / "2.json")], tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    stages = {s["stage"]: s for s in json.loads((tmp_path / "2.json").read_text())["stages"]}
    for stage, games in EXPECTED.items():
        assert (stages[stage]["cached"], stages[stage]["computed"]) == (games, 0)
