"""Dispatch's state on an object store (``dialogbench/dispatch/on_store.py``), against the tests' moto S3 server: a
unit's token there, checked before each commit (superseded, withdrawn); the dispatching run's beat there standing in
for its lease (a commit refused once the run ended, stopped beating, or never beat); an attempt's beat, which the
dispatching run reads on its own clock. A dispatched run on such a lake, its units on other "boxes":
``tests/e2e/test_task_workers.py``."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from dialogbench.dispatch import on_store, units as dispatch
from tests.lake.delta.conftest import s3_env, s3_server  # noqa: F401  (the fixtures)


@pytest.fixture
def lake(s3_env) -> str:  # noqa: F811
    on_store._SEEN.clear()  # what this process saw of other tests' objects
    return s3_env + "/lake"


def test_a_token_on_the_store_lets_its_attempt_commit_while_its_run_beats(lake):
    token = dispatch.grant(lake, "bot-a", "r1")
    assert dispatch.current(lake, "bot-a")["token"] == token
    assert not Path(lake).exists()  # nothing in a folder: the state is on the store
    with dispatch.run_beating(lake, "r1", dead_after_s=30):
        dispatch.still_current(lake, "bot-a", token)
        with dispatch.commit_guard(lake, "bot-a", token)(Path("tmp")):
            pass
        newer = dispatch.grant(lake, "bot-a", "r1")  # sent again: the first attempt commits nothing more
        with pytest.raises(dispatch.Superseded, match="was superseded"):
            with dispatch.commit_guard(lake, "bot-a", token)(Path("tmp")):
                pass
        dispatch.revoke(lake, "bot-a", dispatch.STOPPED)
        with pytest.raises(dispatch.Withdrawn, match="withdrawn \\(the dispatching run stopped\\)"):
            dispatch.still_current(lake, "bot-a", newer)
    assert dispatch.settle(lake, "bot-a") is None  # a Delta commit is whole or absent: nothing to finish


def test_an_attempt_commits_nothing_once_its_run_ended_or_stopped_beating(lake, monkeypatch):
    token = dispatch.grant(lake, "bot-a", "ended")
    with dispatch.run_beating(lake, "ended", dead_after_s=30):
        dispatch.still_current(lake, "bot-a", token)
    with pytest.raises(dispatch.Withdrawn, match="its dispatching run ended is gone \\(it ended"):
        with dispatch.commit_guard(lake, "bot-a", token)(Path("tmp")):
            pass

    token = dispatch.grant(lake, "bot-b", "never")
    with pytest.raises(dispatch.Withdrawn, match="its beat on the store is missing"):
        dispatch.still_current(lake, "bot-b", token)

    # a run killed: its beat stays as it was; seen once, then unchanged for longer than its dead_after_s
    token = dispatch.grant(lake, "bot-c", "killed")
    on_store.put(lake, on_store.run_name("killed"), {"run_id": "killed", "dead_after_s": 0.5, "beat": 7})
    assert on_store.run_gone(lake, "killed") is None  # first sight
    time.sleep(0.7)
    with pytest.raises(dispatch.Withdrawn, match="has not changed for 1s"):
        with dispatch.commit_guard(lake, "bot-c", token)(Path("tmp")):
            pass


def test_an_attempt_starting_after_its_run_died_does_not_take_the_last_beat_for_life(lake, monkeypatch):
    """A run killed leaves its last beat, which looks fresh on first sight: an attempt's start waits to see it change
    (``FIRST_CHANGE_WAIT_S``), and a live run's beat does change within it."""
    monkeypatch.setattr(on_store, "FIRST_CHANGE_WAIT_S", 1.0)
    token = dispatch.grant(lake, "bot-a", "dead")
    on_store.put(lake, on_store.run_name("dead"), {"run_id": "dead", "dead_after_s": 120, "beat": 3})
    with pytest.raises(dispatch.Withdrawn, match="its beat on the store did not change in 1s"):
        dispatch.still_current(lake, "bot-a", token)
    with dispatch.run_beating(lake, "alive", dead_after_s=120):
        assert on_store.run_gone(lake, "alive", wait_first_s=dispatch.BEAT_S + 2) is None  # it beat meanwhile


def test_the_dispatching_run_sees_an_attempt_beat_on_its_own_clock(lake):
    assert dispatch.last_beat(lake, "bot-a", "t1") is None
    with dispatch.heartbeat(lake, "bot-a", "t1", every_s=0.2):
        first = dispatch.last_beat(lake, "bot-a", "t1")
        time.sleep(0.6)
        later = dispatch.last_beat(lake, "bot-a", "t1")
    assert first is not None and later > first
    time.sleep(0.5)
    assert dispatch.last_beat(lake, "bot-a", "t1") == dispatch.last_beat(lake, "bot-a", "t1")  # stopped: unchanged
    assert str(dispatch.beat_path(lake, "bot-a", "t1")).startswith(lake + "/_dispatch/attempts/bot-a.t1")
