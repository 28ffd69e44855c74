"""A run spread over the GPUs of one box, no work pool (``dispatch:`` without a deployment, dialogbench/dispatch/box.py):
each model's unit runs as a process of its own on a GPU of the run's (``--devices``: "GPUs" are device ids here,
scripted models with a delay per call stand in for engines), both at once on two devices; the cells are the ones a
run on one process computes, each once. A unit process killed (SIGKILL) mid-unit is started again and nothing is
lost or doubled; the run itself killed mid-dispatch takes its units with it, and the next run completes the lake;
the data tests pass after each. A unit's dialogues are judged while another unit (held by the test) has not
finished.

What is shared, each `dialogbench run` costing ~10-25 s of CPU: the run on one process the dispatched cells are
compared with is the session's one (``dispatch_common.alone_lake``, shared with ``test_dispatch.py``); and the run
that completes a lake after its first run was killed is the one whose unit process is killed (one test, one lake:
that run needs its own units, and a run started for it anyway serves). The other tests need runs of their own: the
units' calls overlapping in time, a unit held stopped until the other's dialogues are judged, and the games on six
"GPUs" exclude each other."""

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
from tests.e2e.dispatch_common import alone_lake, cells as _cells, config as _config

pytestmark = pytest.mark.slow


def _box_config(tmp_path: Path, name: str, *, delay: float, limit: int = 3) -> Path:
    path = _config(tmp_path, name, delay=delay, dispatch=False, limit=limit)
    # a process per unit (warm: false): these tests read each unit's own log and kill its process; warm slots (the
    # default) have their test below
    text = path.read_text() + "dispatch: {dead_after_s: 30, poll_s: 0.5, warm: false}\ndevices: ['0', '1']\n"
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


def test_units_run_at_once_on_the_box_s_gpus_and_compute_what_one_process_does(tmp_path, tmp_path_factory):
    theirs = _cells(alone_lake(tmp_path_factory))
    # 2 s a call: each unit's calls span longer than one unit process can start after the other on a loaded machine
    # (at 0.5 s under the suite's load: one unit's calls over in 3.6 s, the other's first call 6 s after its first)
    sent = _run(_box_config(tmp_path, "box", delay=2.0), tmp_path)
    assert sent.returncode == 0, sent.stdout[-2000:] + sent.stderr[-3000:]
    mine = _cells(tmp_path / "lake-box")
    assert mine == theirs and all(len(keys) == len(set(keys)) > 0 for keys in mine.values())
    logs = tmp_path / "lake-box" / "_state" / "attempts" / "logs"
    gpus = {unit: [line for line in (logs / f"{unit}.1.log").read_text().splitlines() if "this unit's GPUs" in line]
            for unit in ("bot-a", "bot-b")}
    assert sorted(lines[0].rsplit(" ", 1)[-1] for lines in gpus.values()) == ["0", "1"], gpus  # one GPU each
    (a0, a1), (b0, b1) = _windows(tmp_path / "lake-box").values()
    assert a0 < b1 and b0 < a1, "the two units' calls did not overlap in time"
    by_stage = {s["stage"]: s for s in json.loads((tmp_path / "box.json").read_text())["stages"]}
    assert by_stage["generate:bot-a"]["computed"] == 3 and by_stage["mtbench101_answer:bot-b"]["computed"] > 0


def test_a_run_killed_mid_dispatch_takes_its_units_with_it_and_the_next_run_restarts_a_killed_unit(tmp_path):
    """One lake, two runs, a kill in each: the first run is killed (SIGKILL) while both its units work, and its unit
    processes end with it; in the next run, the one that completes the lake, a unit process is killed (SIGKILL)
    mid-unit: the run starts it again and ends whole, each cell once, its plan whole, the data tests passing."""
    # 2 s a call: the next run's units have their answers left at least (the first run's, stopped, finish the
    # generation chunk in flight and no more), 3 calls' worth of generation too where the first did not commit it
    config = _box_config(tmp_path, "again", delay=2.0, limit=4)
    lake, log = tmp_path / "lake-again", tmp_path / "first.log"
    run = _run(config, tmp_path, stdout=log.open("w"), stderr=subprocess.STDOUT)
    beats = lake / "_state" / "attempts"
    try:
        units, deadline = [], time.monotonic() + 240
        while len(units) < 2 and time.monotonic() < deadline:  # both units working
            time.sleep(0.5)
            units = _units(run)
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
    # the next run's victim: a unit with the most left to do (its generation, where the first run did not commit it)
    files = list((lake / "generations").glob("**/*.parquet"))
    generated = {m for (m,) in duckdb.sql(f"select distinct model from read_parquet({[str(f) for f in files]})"
                                          ).fetchall()} if files else set()
    unit = next((u for u in ("bot-a", "bot-b") if u not in generated), "bot-a")
    first_beats = set(beats.glob("*.beat"))  # the killed run's attempts: none is the next run's
    log = tmp_path / "again.log"
    run = _run(config, tmp_path, stdout=log.open("w"), stderr=subprocess.STDOUT)
    try:
        victim, deadline = _unit_of(run, unit, within_s=240), time.monotonic() + 240
        while not set(beats.glob(f"{unit}.*.beat")) - first_beats and time.monotonic() < deadline:
            time.sleep(0.5)  # working: its heartbeat written
        assert set(beats.glob(f"{unit}.*.beat")) - first_beats, f"{unit} did not beat\n" + log.read_text()[-3000:]
        time.sleep(3)  # mid-stage
        victim.kill()
        assert run.wait(timeout=420) == 0, log.read_text()[-4000:]
    finally:
        if run.poll() is None:
            run.kill()
    text = log.read_text()
    assert f"{unit} sent (attempt 2)" in text and f"{unit} ended crashed" in text, text[-4000:]
    cells = _cells(lake)
    assert all(len(keys) == len(set(keys)) > 0 for keys in cells.values()), cells
    assert len(cells["generations"]) == 8  # 4 seeds x 2 models, each once
    by_stage = {s["stage"]: s for s in json.loads((tmp_path / "again.json").read_text())["stages"]}
    assert by_stage["generate:bot-a"]["planned"] == 4
    check = subprocess.run([sys.executable, "-m", "dialogbench.cli", "verify", "--lake", str(lake)],
                           cwd=REPO, env=cli_env(tmp_path), capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def _units(run: subprocess.Popen) -> list[psutil.Process]:
    """The unit processes the run has started (``python -m flows.work``) and that are still alive: a unit that
    ended between listing and reading its command line (a zombie until the run reaps it) is not one."""
    units = []
    for child in psutil.Process(run.pid).children():
        try:
            if "flows.work" in " ".join(child.cmdline()):
                units.append(child)
        except psutil.Error:
            continue
    return units


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


def test_warm_slots_run_unit_after_unit_and_a_model_s_shards_compute_what_one_process_does(tmp_path,
                                                                                           tmp_path_factory):
    """``dispatch.warm`` and ``dispatch.shards: 2`` together: two GPUs, one slot process started once on each, and every
    unit of the run goes through them, each model's work in two parts (MT-Bench-101's answers a share each, BotChat's
    generation whole in the first); the cells are the ones a run on one process computes, each once."""
    theirs = _cells(alone_lake(tmp_path_factory))
    path = _config(tmp_path, "warm", delay=0.2, dispatch=False, limit=3)
    path.write_text(path.read_text() + "dispatch: {dead_after_s: 30, poll_s: 0.5, warm: true, shards: 2}\n"
                    "devices: ['0', '1']\n")
    sent = _run(path, tmp_path)
    assert sent.returncode == 0, sent.stdout[-2000:] + sent.stderr[-3000:]
    mine = _cells(tmp_path / "lake-warm")
    assert mine == theirs and all(len(keys) == len(set(keys)) > 0 for keys in mine.values())
    logs = tmp_path / "lake-warm" / "_state" / "attempts" / "logs"
    assert sorted(p.name for p in logs.iterdir()) == ["slot-0.1.log", "slot-1.1.log"]  # no unit process of its own
    served = {line.split()[1] for log in logs.iterdir() for line in log.read_text().splitlines()
              if line.startswith("=== ")}
    assert served >= {"bot-a#1of2", "bot-a#2of2", "bot-b#1of2", "bot-b#2of2"}, served
    answers = duckdb.sql(f"select detail from read_parquet('{tmp_path}/lake-warm/runs/**/*.parquet') "
                         f"where stage = 'mtbench101_answer:bot-a'").fetchall()
    assert len(answers) == 2 and all("shard:" in detail for (detail,) in answers)  # a runs row per shard
    slots = [p for p in psutil.process_iter(["cmdline"]) if {"flows.work", "--serve"} <= set(p.info["cmdline"] or [])]
    assert not slots  # the slots ended with the dispatch (only this file runs warm slots, a test at a time)


def test_units_racing_to_commit_to_a_delta_lake_store_each_cell_once(tmp_path, tmp_path_factory):
    """``lake_tables: delta``: two warm slots, each model's work in two parts, all of them committing to the same Delta
    tables at once (each commit an insert-if-absent MERGE, retried when another commit won): the cells are the ones a
    run on one process computes, each once, and the run's data tests pass."""
    theirs = _cells(alone_lake(tmp_path_factory))
    path = _config(tmp_path, "delta", delay=0.2, dispatch=False, limit=3)
    path.write_text(path.read_text() + "lake_tables: delta\n"
                    "dispatch: {dead_after_s: 30, poll_s: 0.5, shards: 2}\ndevices: ['0', '1']\n")
    sent = _run(path, tmp_path)
    assert sent.returncode == 0, sent.stdout[-2000:] + sent.stderr[-3000:]
    lake = tmp_path / "lake-delta"
    assert json.loads((lake / "lake.json").read_text())["tables"] == "delta"
    assert (lake / "generations" / "_delta_log").is_dir() and (lake / "mtbench101_answers" / "_delta_log").is_dir()
    mine = _cells(lake)
    assert mine == theirs and all(len(keys) == len(set(keys)) > 0 for keys in mine.values())
