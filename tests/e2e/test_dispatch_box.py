"""A run spread over the GPUs of one box, no work pool (``dispatch:`` without a deployment, dialogbench/box.py):
each model's unit runs as a process of its own on a GPU of the run's (``--devices``: "GPUs" are device ids here,
scripted models with a delay per call stand in for engines), both at once on two devices; the cells are the ones a
run on one process computes, each once. A unit process killed (SIGKILL) mid-unit is started again and nothing is
lost or doubled; the run itself killed mid-dispatch takes its units with it, and the next run completes the lake;
the data tests pass after each."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import psutil
import yaml
import pytest

from tests.e2e.conftest import REPO, cli_env
from tests.e2e.test_dispatch import _cells, _config

pytestmark = pytest.mark.slow


def _box_config(tmp_path: Path, name: str, *, delay: float, limit: int = 3) -> Path:
    path = _config(tmp_path, name, delay=delay, dispatch=False, limit=limit)
    text = path.read_text() + "dispatch: {dead_after_s: 30, poll_s: 0.5}\ndevices: ['0', '1']\n"
    path.write_text(text)
    return path


def _run(config: Path, tmp_path: Path, **popen):
    args = [sys.executable, "-m", "dialogbench.cli", "run", "--config", str(config), "--json",
            str(tmp_path / f"{config.stem}.json")]
    if popen:
        return subprocess.Popen(args, cwd=REPO, env=cli_env(tmp_path), **popen)
    return subprocess.run(args, cwd=REPO, env=cli_env(tmp_path), capture_output=True, text=True, timeout=600)


def _windows(lake: Path) -> dict[str, tuple[float, float]]:
    """Each chatbot's first and last backend call (epoch seconds)."""
    rows = duckdb.sql(f"select model, min(epoch(started_at)), max(epoch(started_at) + seconds) "
                      f"from read_parquet('{lake}/backend_calls/**/*.parquet') where role = 'chatbot' "
                      f"group by model").fetchall()
    return {m: (a, b) for m, a, b in rows}


def test_units_run_at_once_on_the_box_s_gpus_and_compute_what_one_process_does(tmp_path):
    alone = _run(_config(tmp_path, "alone", delay=0.0, dispatch=False), tmp_path)
    assert alone.returncode == 0, alone.stdout[-2000:] + alone.stderr[-3000:]
    # 2 s a call: each unit's calls span longer than one unit process can start after the other on a loaded machine
    # (at 0.5 s under the suite's load: one unit's calls over in 3.6 s, the other's first call 6 s after its first)
    sent = _run(_box_config(tmp_path, "box", delay=2.0), tmp_path)
    assert sent.returncode == 0, sent.stdout[-2000:] + sent.stderr[-3000:]
    mine, theirs = _cells(tmp_path / "lake-box"), _cells(tmp_path / "lake-alone")
    assert mine == theirs and all(len(keys) == len(set(keys)) > 0 for keys in mine.values())
    logs = tmp_path / "lake-box" / "_state" / "attempts" / "logs"
    gpus = {unit: [line for line in (logs / f"{unit}.1.log").read_text().splitlines() if "this unit's GPUs" in line]
            for unit in ("bot-a", "bot-b")}
    assert sorted(lines[0].rsplit(" ", 1)[-1] for lines in gpus.values()) == ["0", "1"], gpus  # one GPU each
    (a0, a1), (b0, b1) = _windows(tmp_path / "lake-box").values()
    assert a0 < b1 and b0 < a1, "the two units' calls did not overlap in time"
    by_stage = {s["stage"]: s for s in json.loads((tmp_path / "box.json").read_text())["stages"]}
    assert by_stage["generate:bot-a"]["computed"] == 3 and by_stage["mtbench101_answer:bot-b"]["computed"] > 0


def test_a_unit_process_killed_is_started_again_and_nothing_is_lost_or_doubled(tmp_path):
    log = tmp_path / "run.log"
    run = _run(_box_config(tmp_path, "killed", delay=1.0, limit=4), tmp_path, stdout=log.open("w"),
               stderr=subprocess.STDOUT)
    beats = tmp_path / "lake-killed" / "_state" / "attempts"
    try:
        victim, deadline = None, time.monotonic() + 240
        while victim is None and time.monotonic() < deadline:  # a unit working: its heartbeat written
            time.sleep(0.5)
            units = [p for p in psutil.Process(run.pid).children() if "flows.work" in " ".join(p.cmdline())]
            victim = units[0] if units and list(beats.glob("*.beat")) else None
        assert victim is not None, "no unit ran\n" + log.read_text()[-3000:]
        time.sleep(3)  # mid-stage
        victim.kill()
        assert run.wait(timeout=420) == 0, log.read_text()[-4000:]
    finally:
        if run.poll() is None:
            run.kill()
    text = log.read_text()
    assert "sent (attempt 2)" in text and "ended crashed" in text, text[-4000:]
    cells = _cells(tmp_path / "lake-killed")
    assert all(len(keys) == len(set(keys)) > 0 for keys in cells.values()), cells
    assert len(cells["generations"]) == 8  # 4 seeds x 2 models, each once
    check = subprocess.run([sys.executable, "-m", "dialogbench.cli", "verify", "--lake",
                            str(tmp_path / "lake-killed")], cwd=REPO, env=cli_env(tmp_path), capture_output=True,
                           text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_run_killed_mid_dispatch_takes_its_units_with_it_and_the_next_run_completes(tmp_path):
    config = _box_config(tmp_path, "again", delay=1.0, limit=4)
    log = tmp_path / "first.log"
    run = _run(config, tmp_path, stdout=log.open("w"), stderr=subprocess.STDOUT)
    beats = tmp_path / "lake-again" / "_state" / "attempts"
    try:
        units, deadline = [], time.monotonic() + 240
        while len(units) < 2 and time.monotonic() < deadline:  # both units working
            time.sleep(0.5)
            units = [p for p in psutil.Process(run.pid).children() if "flows.work" in " ".join(p.cmdline())]
            units = units if len(list(beats.glob("*.beat"))) >= 2 else []
        assert len(units) == 2, "the units did not start\n" + log.read_text()[-3000:]
        time.sleep(3)  # mid-stage
        run.kill()  # SIGKILL: no handler runs in the run's process
        run.wait()
        gone = psutil.wait_procs(units, timeout=60)[1] == []  # the kernel's SIGTERM (PR_SET_PDEATHSIG) stops them
        assert gone, [p.pid for p in units if p.is_running()]
    finally:
        if run.poll() is None:
            run.kill()
    again = _run(config, tmp_path)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-3000:]
    cells = _cells(tmp_path / "lake-again")
    assert all(len(keys) == len(set(keys)) > 0 for keys in cells.values()), cells
    assert len(cells["generations"]) == 8  # 4 seeds x 2 models, each once
    by_stage = {s["stage"]: s for s in json.loads((tmp_path / "again.json").read_text())["stages"]}
    assert by_stage["generate:bot-a"]["planned"] == 4
    check = subprocess.run([sys.executable, "-m", "dialogbench.cli", "verify", "--lake", str(tmp_path / "lake-again")],
                           cwd=REPO, env=cli_env(tmp_path), capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def _game_config(tmp_path: Path, name: str, *, delay: float, devices: list[str] | None) -> Path:
    data = {
        "lake": str(tmp_path / f"lake-{name}"),
        "models": [{"name": m, "backend": "scripted", "script": [f"{m}: sure."], "script_delay_s": delay}
                   for m in ("bot-a", "bot-b", "bot-c")],
        "judges": [{"name": "judge", "backend": "scripted", "script": ["Rating: [[7]]"]}],
        "botchat": {"enabled": False, "judge": "judge"},
        "gameeval": {"enabled": True, "askguess": {"enabled": False}, "tofukingdom": {"enabled": False},
                     "spyfall": {"limit": 1, "max_rounds": 1}},
        "judge_checks": {"max_unparsed": 0.9, "probes": 0},
    }
    if devices:
        data.update({"dispatch": {"dead_after_s": 30, "poll_s": 0.5}, "devices": devices})
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_game_s_groups_of_players_play_at_once_each_a_unit_and_its_plan_is_whole(tmp_path):
    alone = _run(_game_config(tmp_path, "alone", delay=0.0, devices=None), tmp_path)
    assert alone.returncode == 0, alone.stdout[-2000:] + alone.stderr[-3000:]
    # three SpyFall pairs, each a unit of two players at one GPU each: six "GPUs" hold them all at once
    sent = _run(_game_config(tmp_path, "groups", delay=0.3, devices=[str(i) for i in range(6)]), tmp_path)
    assert sent.returncode == 0, sent.stdout[-2000:] + sent.stderr[-3000:]
    games = {name: sorted(k for (k,) in duckdb.sql(f"select cell_key from read_parquet("
                                                      f"'{tmp_path / f'lake-{name}'}/gameeval_games/**/*.parquet')"
                                                      ).fetchall()) for name in ("alone", "groups")}
    assert games["groups"] == games["alone"] and len(games["groups"]) == len(set(games["groups"])) > 0
    lake = tmp_path / "lake-groups"
    rows = duckdb.sql(f"select detail, epoch(started_at), epoch(finished_at) from read_parquet("
                      f"'{lake}/runs/**/*.parquet') where stage = 'gameeval_spyfall'").fetchall()
    assert sorted(json.loads(d)["group"] for d, _, _ in rows) == [["bot-a", "bot-b"], ["bot-a", "bot-c"],
                                                                   ["bot-b", "bot-c"]]  # a row per group
    assert max(a for _, a, _ in rows) < min(b for _, _, b in rows), "the pairs' games did not play at the same time"
    summary = json.loads((tmp_path / "groups.json").read_text())
    spyfall = [s for s in summary["stages"] if s["stage"] == "gameeval_spyfall"]
    assert len(spyfall) == 1 and spyfall[0]["planned"] == len(games["groups"]), spyfall  # the groups combined
    plan = duckdb.sql(f"select count(*) from read_parquet('{lake}/plans/**/*.parquet') "
                      f"where stage = 'gameeval_spyfall'").fetchall()[0][0]
    assert plan == len(games["groups"])  # the dispatching run recorded the whole stage's plan, once
    check = subprocess.run([sys.executable, "-m", "dialogbench.cli", "verify", "--lake", str(lake)],
                           cwd=REPO, env=cli_env(tmp_path), capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.alone  # the order of two units' events: another test's load can delay the judging unit past it
def test_the_judge_judges_a_finished_unit_s_work_while_another_unit_still_generates(tmp_path):
    path = _box_config(tmp_path, "judging", delay=0.0, limit=3)
    data = yaml.safe_load(path.read_text())
    for model, delay in zip(data["models"], (0.1, 3.0)):  # bot-b's unit takes far longer
        model["script_delay_s"] = delay
    path.write_text(yaml.safe_dump(data))
    run = _run(path, tmp_path)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    lake = tmp_path / "lake-judging"
    first = dict(duckdb.sql(f"select model, min(epoch(created_at)) from read_parquet("
                            f"'{lake}/unieval_judgments/**/*.parquet') group by model").fetchall())
    generated = dict(duckdb.sql(f"select model, max(epoch(created_at)) from read_parquet("
                                f"'{lake}/generations/**/*.parquet') group by model").fetchall())
    working = _windows(lake)["bot-b"][1]  # bot-b's unit's last chatbot call ended (its MT-Bench-101 answers too)
    assert first["bot-a"] < working, (f"bot-a's dialogues were judged {first['bot-a'] - working:.1f} s after "
                                      f"bot-b's unit made its last call")
    assert first["bot-b"] > generated["bot-b"]
    log = (lake / "_state" / "attempts" / "logs" / "judging_judge.1.log").read_text()
    assert "botchat_unieval" in log
    # the run's report counts what the judging pass computed as computed, not cached, and every cell once
    by_stage = {s["stage"]: s for s in json.loads((tmp_path / "judging.json").read_text())["stages"]}
    unieval = by_stage["botchat_unieval"]
    assert (unieval["planned"], unieval["computed"], unieval["cached"]) == (6, 6, 0), unieval
    assert unieval["detail"]["passes"] >= 2
    cells = _cells(lake)
    assert all(len(keys) == len(set(keys)) > 0 for keys in cells.values()), cells
