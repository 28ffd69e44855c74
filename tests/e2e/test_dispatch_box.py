"""A run spread over the GPUs of one box, no work pool (``dispatch:`` without a deployment, dialogbench/dispatch/box.py):
each model's unit runs as a process of its own on a GPU of the run's (``--devices``: "GPUs" are device ids here,
scripted models with a delay per call stand in for engines), both at once on two devices; the cells are the ones a
run on one process computes, each once. A unit process killed (SIGKILL) mid-unit is started again and nothing is
lost or doubled; the run itself killed mid-dispatch takes its units with it, and the next run completes the lake;
the data tests pass after each. A unit's dialogues are judged while another unit (held by the test) has not
finished."""

from __future__ import annotations

import json
import os
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


def _unit_of(run: subprocess.Popen, unit: str, *, within_s: float) -> psutil.Process:
    """The unit process the run started for ``unit``: a ``flows.work`` child whose output goes to ``<unit>.1.log``."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        for child in psutil.Process(run.pid).children():
            try:
                if "flows.work" in " ".join(child.cmdline()) and \
                        os.readlink(f"/proc/{child.pid}/fd/1").endswith(f"/{unit}.1.log"):
                    return child
            except (psutil.Error, OSError):  # it ended, or has not opened its log yet
                continue
        if run.poll() is not None:
            break
        time.sleep(0.05)
    raise AssertionError(f"no unit process for {unit} within {within_s} s")


def _judged(lake: Path, model: str) -> bool:
    """Whether the lake holds a UniEval judgment of ``model``'s dialogues (a file gone between the listing and the
    read, replaced by a rewrite, reads as not yet: the caller polls)."""
    files = list((lake / "unieval_judgments").glob("**/*.parquet"))
    try:
        return bool(files) and duckdb.sql(f"select count(*) from read_parquet({[str(f) for f in files]}) "
                                          f"where model = '{model}'").fetchall()[0][0] > 0
    except duckdb.IOException:
        return False


def test_the_judge_judges_a_finished_unit_s_work_while_another_unit_still_generates(tmp_path):
    path = _box_config(tmp_path, "judging", delay=0.1, limit=3)
    data = yaml.safe_load(path.read_text())
    data["dispatch"]["dead_after_s"] = 600  # bot-b's unit is held below: its silence is not a death
    path.write_text(yaml.safe_dump(data))
    log_path = tmp_path / "judging.log"
    run = _run(path, tmp_path, stdout=log_path.open("w"), stderr=subprocess.STDOUT)
    lake, held = tmp_path / "lake-judging", None
    try:
        # bot-b's unit is held (SIGSTOP) as soon as it starts, whatever the machine's load, until the judge has
        # judged bot-a's dialogues: the judge must not wait for every unit to finish
        held = _unit_of(run, "bot-b", within_s=240)
        held.suspend()
        deadline = time.monotonic() + 300
        while not _judged(lake, "bot-a") and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.5)
        judged_while_held = _judged(lake, "bot-a")
        assert held.status() == psutil.STATUS_STOPPED  # still held: its work is not done
        held.resume()
        assert judged_while_held, "bot-a's dialogues were not judged while bot-b's unit was unfinished\n" + \
            log_path.read_text()[-3000:]
        assert run.wait(timeout=420) == 0, log_path.read_text()[-4000:]
    finally:
        if held is not None and held.is_running():
            held.resume()  # a stopped process takes no signal but SIGKILL: let it hear its parent die
        if run.poll() is None:
            run.kill()
    first = dict(duckdb.sql(f"select model, min(epoch(created_at)) from read_parquet("
                            f"'{lake}/unieval_judgments/**/*.parquet') group by model").fetchall())
    generated = dict(duckdb.sql(f"select model, max(epoch(created_at)) from read_parquet("
                                f"'{lake}/generations/**/*.parquet') group by model").fetchall())
    assert first["bot-a"] < _windows(lake)["bot-b"][0]  # judged before bot-b's unit made its first call
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
