"""``dialogbench.dispatch.scheduler.send_all`` with a launcher that plays back how each attempt ends: a unit that
ended Crashed (its process killed, or a transient API error: ``outcome``) is sent again with a new token up to
``retries`` times; one that ended Failed or Cancelled (withdrawn) is not."""

from __future__ import annotations

from dialogbench.dispatch import scheduler, units as dispatch
from dialogbench.run.config import DispatchConfig


class PlayedBack:
    """Each unit's attempts end as ``endings[unit]`` lists them, one after the other."""

    def __init__(self, endings: dict[str, list[str]]) -> None:
        self.endings, self.sent = {u: list(e) for u, e in endings.items()}, []

    def fits(self, unit: str) -> bool:
        return True

    def start(self, unit: str, parameters: dict, *, attempt: int):
        self.sent.append((unit, attempt, parameters["token"]))
        return (unit, self.endings[unit].pop(0))

    def where(self, attempt) -> str:
        return "here"

    def state(self, attempt) -> str:
        return attempt[1]

    def crash(self, attempt, message: str) -> None:
        raise AssertionError("no attempt is silent here")

    def explain(self, unit: str, attempt, kind: str) -> None:
        pass

    def stop(self, attempt) -> None:
        pass

    def stopped(self, attempts: list) -> None:
        pass


def test_crashed_units_are_sent_again_with_a_new_token_and_failed_or_cancelled_ones_are_not(tmp_path):
    launcher = PlayedBack({"flaky": ["CRASHED", "CRASHED", "COMPLETED"], "broken": ["FAILED"],
                           "withdrawn": ["CANCELLED"], "dead": ["CRASHED", "CRASHED", "CRASHED"]})
    units = [dispatch.Unit(name, ("generate",), (name,)) for name in launcher.endings]
    ended = scheduler.send_all(launcher=launcher, lake=tmp_path, run_id="r1",
                               settings=DispatchConfig(retries=2, poll_s=0.01), units=units, judge=None,
                               parameters=lambda unit, token: {"token": token})
    assert ended == {"flaky": "COMPLETED", "broken": "FAILED", "withdrawn": "CANCELLED", "dead": "CRASHED"}
    attempts = {u: [a for n, a, _ in launcher.sent if n == u] for u in ended}
    assert attempts == {"flaky": [1, 2, 3], "broken": [1], "withdrawn": [1], "dead": [1, 2, 3]}
    tokens = [t for n, _, t in launcher.sent if n == "flaky"]
    assert len(set(tokens)) == 3 and dispatch.current(tmp_path, "flaky")["token"] == tokens[-1]


class Queued(PlayedBack):
    """Each attempt waits in the queue (no worker takes it) for ``polls`` looks, then completes."""

    def __init__(self, units: list[str], polls: int) -> None:
        super().__init__({u: ["COMPLETED"] for u in units})
        self.polls = polls

    def start(self, unit: str, parameters: dict, *, attempt: int):
        return [unit, self.polls]

    def state(self, attempt) -> str:
        attempt[1] -= 1
        return "SCHEDULED" if attempt[1] > 0 else "COMPLETED"


def test_a_unit_no_worker_takes_is_said_once_to_wait_and_is_never_presumed_dead(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(dispatch, "WAITING_SAY_S", 0.05)
    launcher = Queued(["bot-a"], polls=20)
    ended = scheduler.send_all(launcher=launcher, lake=tmp_path, run_id="r1",
                               settings=DispatchConfig(poll_s=0.01, dead_after_s=15), units=[
                                   dispatch.Unit("bot-a", ("generate",), ("bot-a",))], judge=None,
                               parameters=lambda unit, token: {"token": token})
    assert ended == {"bot-a": "COMPLETED"}
    said = [r.getMessage() for r in caplog.records if "no worker has taken it" in r.getMessage()]
    assert said == ["dispatch: bot-a: no worker has taken it in 0s (scheduled): are workers up, and free?"]


def test_units_go_to_task_workers_or_a_work_pool_not_both():
    import pytest
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="dispatch.task_workers and dispatch.deployment both set"):
        DispatchConfig(task_workers=True, deployment="dialogbench-work/gpu")
    assert DispatchConfig(task_workers=True).elsewhere and DispatchConfig(deployment="a/b").elsewhere
    assert not DispatchConfig().elsewhere
