"""What a dispatched run sends, and why a late worker cannot double a cell (dialogbench/dispatch/units.py); the real work
pool is tests/e2e/test_dispatch.py."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time

import pyarrow as pa
import pytest

from dialogbench.dispatch import units as dispatch
from dialogbench.run import registry
from dialogbench.lake.lease import held_by, lake_lease
from dialogbench.lake.store import Lake, guard_commits
from dialogbench.run.registry import open_lake, run_for
from tests.conftest import REPO_ROOT, chatbot, config_dict


def test_each_model_s_work_is_one_unit_between_what_comes_before_and_after(make_config, lake_dir):
    data = config_dict(lake_dir, models=[chatbot("bot-a"), chatbot("bot-b")])
    config = make_config({**data, "mtbench101": {"limit": 1, "tasks": ["CM"]}})
    families = {f.name: [s.name for s in registry.family_stages(config, f.name)] for f in registry.families()
                if f.enabled(config) and registry.family_stages(config, f.name)}
    before, units, after = dispatch.split(run_for(config), families)
    assert before == {"botchat": ["extract_seeds"]}
    assert units == [dispatch.Unit("bot-a", ("generate:bot-a", "mtbench101_answer:bot-a"), ("bot-a",)),
                     dispatch.Unit("bot-b", ("generate:bot-b", "mtbench101_answer:bot-b"), ("bot-b",))]
    assert after["botchat"][0] == "botchat_lengths" and after["mtbench101"] == ["mtbench101_judge"]


def _game_config(make_config, lake_dir, names=("bot-a", "bot-b", "bot-c")):
    data = config_dict(lake_dir, models=[chatbot(n) for n in names])
    return make_config({**data, "botchat": {**data["botchat"], "limit": 1},
                        "gameeval": {"enabled": True, "askguess": {"limit": 1, "max_rounds": 1},
                                     "spyfall": {"limit": 1, "max_rounds": 1}, "tofukingdom": {"enabled": False}}})


def test_a_game_of_several_groups_of_players_goes_out_as_a_unit_per_group(make_config, lake_dir):
    config = _game_config(make_config, lake_dir)
    families = {f.name: [s.name for s in registry.family_stages(config, f.name)] for f in registry.families()
                if f.enabled(config) and registry.family_stages(config, f.name)}
    _, units, _ = dispatch.split(run_for(config), families)
    by_name = {u.name: u for u in units}
    # Ask-Guess is played one model at a time: its games join the model's own unit, in part
    assert by_name["bot-a"] == dispatch.Unit("bot-a", ("generate:bot-a", "gameeval_askguess"), ("bot-a",),
                                             ("gameeval_askguess",))
    # SpyFall's pairs: one unit each, loading only that pair
    assert [(u.name, u.stages, u.models, u.grouped) for u in units if u.name.count("+")] == [
        ("bot-a+bot-b", ("gameeval_spyfall",), ("bot-a", "bot-b"), ("gameeval_spyfall",)),
        ("bot-a+bot-c", ("gameeval_spyfall",), ("bot-a", "bot-c"), ("gameeval_spyfall",)),
        ("bot-b+bot-c", ("gameeval_spyfall",), ("bot-b", "bot-c"), ("gameeval_spyfall",))]


def test_a_game_of_one_group_is_one_unit_that_runs_all_of_it(make_config, lake_dir):
    config = _game_config(make_config, lake_dir, names=("bot-a", "bot-b"))
    families = {f.name: [s.name for s in registry.family_stages(config, f.name)] for f in registry.families()
                if f.enabled(config) and registry.family_stages(config, f.name)}
    _, units, _ = dispatch.split(run_for(config), families)
    assert units[-1] == dispatch.Unit("bot-a+bot-b", ("gameeval_spyfall",), ("bot-a", "bot-b"), ())


def test_a_unit_plans_only_its_group_s_games_and_the_groups_add_up_to_the_stage(make_config, lake_dir):
    from dialogbench.cells.runner import plan_stage
    from dialogbench.run.runs import StageReport, combine

    config = _game_config(make_config, lake_dir)
    lake, stage = open_lake(config.lake), registry.stage(config, "gameeval_spyfall")
    everything = stage.plan(config, lake).cells
    parts = {}
    for group in (["bot-a", "bot-b"], ["bot-a", "bot-c"], ["bot-b", "bot-c"]):
        chunks, report = plan_stage(stage, config, "run-1", lake=lake, group=group)
        parts[tuple(group)] = [c for chunk in chunks for c in chunk.cells]
        assert all(c.models == group for c in parts[tuple(group)]) and report.detail["group"] == group
        assert report.planned == len(parts[tuple(group)]) > 0
    assert sorted(c.key for cells in parts.values() for c in cells) == sorted(c.key for c in everything)
    assert not (lake.root / "plans").exists() or not list((lake.root / "plans").rglob("*.parquet"))  # none recorded
    total = combine([StageReport("s", planned=4, cached=1, computed=3, seconds=1.0, detail={"group": ["a"], "moves": 2}),
                     StageReport("s", planned=2, cached=0, computed=1, failed=1, seconds=2.0, detail={"moves": 5})])
    assert (total.planned, total.cached, total.computed, total.failed, total.seconds) == (6, 1, 4, 1, 3.0)
    assert total.detail == {"moves": 7}


def test_a_model_s_unit_splits_in_shards_where_its_cells_are_independent(make_config, lake_dir):
    """dispatch.shards: 2: each model's unit in two parts; MT-Bench-101's golden-context answers and Ask-Guess's games
    split (a share each, planned by the dispatching run), BotChat's generation stays whole in the first part; a game
    of several players' groups is not split again."""
    config = _game_config(make_config, lake_dir, names=("bot-a", "bot-b"))
    config = make_config({**config.model_dump(mode="json", exclude_defaults=True),
                          "mtbench101": {"limit": 1, "tasks": ["CM"]}, "dispatch": {"shards": 2}})
    families = {f.name: [s.name for s in registry.family_stages(config, f.name)] for f in registry.families()
                if f.enabled(config) and registry.family_stages(config, f.name)}
    _, units, _ = dispatch.split(run_for(config), families)
    by_name = {u.name: u for u in units}
    split = ("mtbench101_answer:bot-a", "gameeval_askguess")
    assert by_name["bot-a#1of2"] == dispatch.Unit(
        "bot-a#1of2", ("generate:bot-a", "mtbench101_answer:bot-a", "gameeval_askguess"), ("bot-a",),
        ("gameeval_askguess", "mtbench101_answer:bot-a"), (0, 2))
    assert by_name["bot-a#2of2"] == dispatch.Unit("bot-a#2of2", split, ("bot-a",),
                                                  ("gameeval_askguess", "mtbench101_answer:bot-a"), (1, 2))
    assert by_name["bot-a#2of2"].group("gameeval_askguess") == ["bot-a", "shard:2/2"]
    assert dispatch.parse_group(["bot-a", "shard:2/2"]) == (["bot-a"], (1, 2))
    assert by_name["bot-a+bot-b"].shard is None  # SpyFall's pair: one unit, as before
    assert set(by_name) == {"bot-a#1of2", "bot-a#2of2", "bot-b#1of2", "bot-b#2of2", "bot-a+bot-b"}


def test_the_shards_of_a_stage_cover_its_cells_exactly_once(make_config, lake_dir):
    from dialogbench.cells.runner import plan_stage

    data = config_dict(lake_dir, models=[chatbot("bot-a")])
    config = make_config({**data, "mtbench101": {"limit": 2, "tasks": ["CM", "SI"]}})
    lake, stage = open_lake(config.lake), registry.stage(config, "mtbench101_answer:bot-a")
    everything = sorted(c.key for c in stage.plan(config, lake).cells)
    parts = []
    for shard in ("shard:1/3", "shard:2/3", "shard:3/3"):
        chunks, report = plan_stage(stage, config, "run-1", lake=lake, group=["bot-a", shard])
        parts.append(sorted(c.key for chunk in chunks for c in chunk.cells))
        assert report.detail["group"] == ["bot-a", shard] and report.planned == len(parts[-1])
    assert sorted(k for part in parts for k in part) == everything and all(parts)  # each once, none empty


def _write(lake: Lake, key: str):
    return lake.write("runs", pa.table({"run_id": ["r"], "stage": [key]}))


@pytest.fixture
def leased(tmp_path):
    """The lake at tmp_path/lake, its lease held by run r1: the dispatching run that grants the attempts."""
    with lake_lease(tmp_path / "lake", run_id="r1"):
        yield open_lake(tmp_path / "lake")


def test_an_attempt_sent_again_commits_nothing_more(leased, tmp_path):
    lake = leased
    first = dispatch.grant(lake.root, "bot-a", "r1")
    with guard_commits(dispatch.commit_guard(lake.root, "bot-a", first)):
        assert _write(lake, "one").exists()
        second = dispatch.grant(lake.root, "bot-a", "r1")  # the dispatching run presumed it dead
        with pytest.raises(dispatch.Superseded, match="superseded"):
            _write(lake, "two")
    assert not [p for p in (tmp_path / "lake" / "runs").rglob("*") if p.is_file() and "tmp" in p.name]
    with guard_commits(dispatch.commit_guard(lake.root, "bot-a", second)):
        assert _write(lake, "three").exists()
    assert sorted(lake.read("runs").column("stage").to_pylist()) == ["one", "three"]


def test_an_attempt_of_a_run_that_stopped_is_withdrawn_not_sent_again(leased):
    """A stopping run revokes its units' attempts as stopped: the next commit is refused as withdrawn (the unit ends
    Cancelled), where an attempt presumed dead is told it was superseded (it is sent again)."""
    lake = leased
    token = dispatch.grant(lake.root, "bot-a", "r1")
    dispatch.revoke(lake.root, "bot-a", dispatch.STOPPED)
    with guard_commits(dispatch.commit_guard(lake.root, "bot-a", token)):
        with pytest.raises(dispatch.Withdrawn, match="withdrawn \\(the dispatching run stopped\\)"):
            _write(lake, "late")
    token = dispatch.grant(lake.root, "bot-b", "r1")
    dispatch.revoke(lake.root, "bot-b")  # presumed dead
    with guard_commits(dispatch.commit_guard(lake.root, "bot-b", token)):
        with pytest.raises(dispatch.Superseded, match="no heartbeat: presumed dead; the dispatching run sent it") as e:
            _write(lake, "late")
    assert not isinstance(e.value, dispatch.Withdrawn)
    assert not lake.has("runs")


def test_no_attempt_commits_once_its_dispatching_run_is_gone(tmp_path):
    """The run that granted the attempt no longer holds the lake's lease (killed: the kernel dropped its lock; or
    ended; or another run holds it now): the attempt's next commit is refused, however current its token."""
    lake = open_lake(tmp_path / "lake")
    with lake_lease(lake.root, run_id="r1"):
        token = dispatch.grant(lake.root, "bot-a", "r1")
        with guard_commits(dispatch.commit_guard(lake.root, "bot-a", token)):
            assert _write(lake, "while it runs").exists()
    for holder in (None, "r2"):
        with lake_lease(lake.root, run_id=holder) if holder else contextlib.nullcontext():
            with guard_commits(dispatch.commit_guard(lake.root, "bot-a", token)):
                with pytest.raises(dispatch.Withdrawn, match="dispatching run r1 no longer holds the lake's lease"):
                    _write(lake, "after")
    assert lake.read("runs").column("stage").to_pylist() == ["while it runs"]


def test_a_heartbeat_beats_while_the_work_runs(tmp_path):
    token = dispatch.grant(tmp_path, "bot-b", "r1")
    assert dispatch.last_beat(tmp_path, "bot-b", token) is None
    with dispatch.heartbeat(tmp_path, "bot-b", token, every_s=0.05):
        pass
    assert dispatch.last_beat(tmp_path, "bot-b", token) is not None


def test_work_writes_only_while_the_run_that_sent_it_holds_the_lease(tmp_path):
    root = tmp_path / "lake"
    root.mkdir()
    assert not held_by(root, "r1")
    with lake_lease(root, run_id="r1"):
        assert held_by(root, "r1") and not held_by(root, "r2")
    assert not held_by(root, "r1")  # its note stays, the lock is gone


def test_the_judge_stages_that_can_judge_inputs_so_far_form_the_judging_unit(make_config, lake_dir):
    data = config_dict(lake_dir, models=[chatbot("bot-a"), chatbot("bot-b")])
    data = {**data, "mtbench101": {"limit": 1, "tasks": ["CM"]}, "canary": {"size": 2}}
    config = make_config({**data, "dispatch": {}})
    families = {f.name: [s.name for s in registry.family_stages(config, f.name)] for f in registry.families()
                if f.enabled(config) and registry.family_stages(config, f.name)}
    _, _, after = dispatch.split(run_for(config), families)
    unit = dispatch.judging(run_for(config), after)
    assert unit.name == "judging:judge" and unit.models == ("judge",)
    assert "botchat_unieval" in unit.stages and "mtbench101_judge" in unit.stages
    assert "judge_canary" in after["canary"] and "judge_canary" not in unit.stages  # once per run, at the end
    assert "botchat_lengths" not in unit.stages and "botchat_elo" not in unit.stages  # no judge in them
    off = make_config({**data, "dispatch": {"judge_while_generating": False}})
    assert dispatch.judging(run_for(off), after) is None


def test_a_stage_recorded_again_in_the_same_run_records_the_run_s_total(make_config, lake_dir):
    from dialogbench.cells.runner import finish_stage
    from dialogbench.run.runs import StageReport, recorded_stage

    config = make_config(config_dict(lake_dir))
    lake = open_lake(config.lake)
    first = finish_stage(config, "run-1", [StageReport("s", planned=4, cached=1, blocked=2),
                                           StageReport("s", computed=1, seconds=2.0, detail={"calls": 1})], "c.yaml",
                         lake=lake)
    assert (first.computed, first.cached, first.blocked) == (1, 1, 2)
    # the rest once the other units ended: the first pass's cell is cached now, one more computed, one failed
    again = finish_stage(config, "run-1", [StageReport("s", planned=4, cached=2),
                                           StageReport("s", computed=1, failed=1, seconds=3.0, detail={"calls": 2})],
                         "c.yaml", lake=lake)
    assert (again.planned, again.cached, again.computed, again.failed, again.blocked) == (4, 1, 2, 1, 0)
    assert again.seconds == 5.0 and again.detail == {"calls": 3, "passes": 2}
    assert recorded_stage(lake, run_id="run-1", stage="s") == again
    assert recorded_stage(lake, run_id="run-2", stage="s") is None  # another run starts from nothing


def test_a_revoked_unit_commits_nothing_more(tmp_path):
    """The judging unit presumed dead is never sent again: its token is revoked, so if its worker only picked it up
    late, it judges nothing into the lake beside the run's own judging."""
    lake = open_lake(tmp_path / "lake")
    token = dispatch.grant(lake.root, "judging:judge", "r1")
    dispatch.revoke(lake.root, "judging:judge")
    with guard_commits(dispatch.commit_guard(lake.root, "judging:judge", token)):
        with pytest.raises(dispatch.Superseded, match="superseded"):
            _write(lake, "late")
    assert not lake.has("runs")


def test_waiting_in_the_pool_s_queue_is_not_a_death():
    """A unit sent at 0 waits 500 s for a free worker (its flow run Scheduled), then is picked up: it has until 120 s
    after that to beat, and each beat gives it 120 s more."""
    watch = dispatch.Watch(120.0)
    assert not watch.dead(picked_up=False, beat=None, now=500.0)  # still queued
    assert not watch.dead(picked_up=True, beat=None, now=502.0)  # picked up now: not dead on arrival
    assert not watch.dead(picked_up=True, beat=None, now=600.0)
    assert not watch.dead(picked_up=True, beat=610.0, now=700.0)
    assert watch.silent_s(picked_up=True, beat=610.0, now=731.0) == 121.0
    assert watch.dead(picked_up=True, beat=610.0, now=731.0)  # no beat for 121 s: presumed dead


def test_a_worker_that_never_beats_is_presumed_dead_after_the_bound():
    watch = dispatch.Watch(15.0)
    assert not watch.dead(picked_up=True, beat=None, now=100.0)
    assert watch.dead(picked_up=True, beat=None, now=115.5)


def test_two_threads_of_one_unit_commit_one_at_a_time(tmp_path):
    """A POSIX record lock is the process's, not the thread's: without a lock of its own, a second chunk of the unit
    committing at once would enter the guard beside the first, and its end would release the lock under the first,
    mid-commit (then a new attempt's grant could settle that commit while it is being made)."""
    with lake_lease(tmp_path, run_id="r1"):  # the dispatching run, while its units run
        _two_threads_commit_one_at_a_time(tmp_path)


def _two_threads_commit_one_at_a_time(tmp_path) -> None:
    token = dispatch.grant(tmp_path, "bot-a", "r1")
    guard = dispatch.commit_guard(tmp_path, "bot-a", token)
    tmp = tmp_path / "runs" / ".part-x-0123abcd.parquet.tmp"
    inside, leave, second = threading.Event(), threading.Event(), threading.Event()

    def first() -> None:
        with guard(tmp):
            inside.set()
            leave.wait(10)

    def other() -> None:
        inside.wait(10)
        with guard(tmp):
            second.set()

    threads = [threading.Thread(target=first), threading.Thread(target=other)]
    for thread in threads:
        thread.start()
    assert inside.wait(10)
    assert not second.wait(0.3)  # the second waits for the first's commit
    leave.set()
    assert second.wait(10)
    for thread in threads:
        thread.join()


def test_a_unit_slower_to_start_than_dead_after_s_beats_all_along(tmp_path, monkeypatch):
    """Before its work a unit's flow builds its run, imports its family and loads its engines: slower than
    ``dead_after_s`` here (1 s against 0.3 s), it is still not presumed dead, as it beats from its first moment."""
    import tasks.dispatch
    from flows.work import work

    monkeypatch.setattr(dispatch, "BEAT_S", 0.05)
    token = dispatch.grant(tmp_path, "bot-a", "r1")

    def slow_start(*args):
        time.sleep(1.0)
        raise RuntimeError("started, at last")

    import dialogbench.run.registry

    monkeypatch.setattr(dialogbench.run.registry, "build_run", slow_start)  # the unit's run, built in its flow
    watch, dead, stop = dispatch.Watch(0.3), [], threading.Event()

    def dispatching_run() -> None:  # as tasks.dispatch.send_units watches it: picked up from now
        while not stop.is_set():
            if watch.dead(picked_up=True, beat=dispatch.last_beat(tmp_path, "bot-a", token), now=time.time()):
                dead.append(time.time())
            time.sleep(0.02)

    watcher = threading.Thread(target=dispatching_run)
    watcher.start()
    try:
        with pytest.raises(RuntimeError, match="started, at last"):
            work.fn(config_path="c.yaml", overrides={"lake": str(tmp_path)}, run_id="r1", unit="bot-a",
                    family_stages={}, token=token)
    finally:
        stop.set()
        watcher.join()
    assert not dead


def test_a_unit_on_this_box_beats_before_it_imports_anything_slow(tmp_path):
    """``python -m flows.work`` (dialogbench/dispatch/box.py) beats before Prefect is imported and its flow run made: here
    that flow run never comes (no server answers), yet the beat is there."""
    token = dispatch.grant(tmp_path, "bot-a", "r1")
    parameters = {"config_path": "c.yaml", "overrides": {"lake": str(tmp_path)}, "run_id": "r1", "unit": "bot-a",
                  "family_stages": {}, "token": token, "groups": {}, "parent_pid": os.getpid()}
    env = {**os.environ, "PREFECT_API_URL": "http://127.0.0.1:9/api"}  # nothing listens there
    process = subprocess.Popen([sys.executable, "-m", "flows.work"], stdin=subprocess.PIPE, cwd=REPO_ROOT, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    process.stdin.write(json.dumps(parameters))
    process.stdin.close()
    try:
        deadline = time.monotonic() + 60
        while dispatch.last_beat(tmp_path, "bot-a", token) is None and process.poll() is None:
            assert time.monotonic() < deadline, "no beat in 60 s"
            time.sleep(0.05)
        assert dispatch.last_beat(tmp_path, "bot-a", token) is not None, "it ended without a beat"
    finally:
        process.kill()
        process.wait()


def test_dead_after_s_below_three_heartbeats_is_refused_naming_the_field():
    from pydantic import ValidationError

    from dialogbench.run.config import DEAD_AFTER_MIN_S, DispatchConfig

    assert DEAD_AFTER_MIN_S >= 3 * dispatch.BEAT_S  # a healthy unit beats at least three times within the bound
    with pytest.raises(ValidationError, match="dead_after_s"):
        DispatchConfig(dead_after_s=dispatch.BEAT_S)
    assert DispatchConfig(dead_after_s=DEAD_AFTER_MIN_S).dead_after_s == DEAD_AFTER_MIN_S


def test_an_attempt_withdrawn_before_it_began_says_so_at_its_first_check(leased):
    """A unit whose run stopped before the unit got going (its worker was slow to pick it up) is told at its start,
    before any work, as it would be at its first commit; a current attempt of a run holding the lease goes on."""
    lake = leased
    token = dispatch.grant(lake.root, "bot-a", "r1")
    dispatch.still_current(lake.root, "bot-a", token)  # nothing raised
    dispatch.revoke(lake.root, "bot-a", dispatch.STOPPED)
    with pytest.raises(dispatch.Withdrawn, match="the dispatching run stopped"):
        dispatch.still_current(lake.root, "bot-a", token)
