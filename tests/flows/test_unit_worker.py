"""The task workers' side of ``dispatch.task_workers`` without a server: how a unit's task run ends when its worker
was stopped mid-unit (Crashed: sent again, elsewhere), the worker's refusals, and the dispatching side's refusal
without a server of its own. A real server, two workers, a stop and a resend: ``tests/e2e/test_task_workers.py``."""

from __future__ import annotations

import signal
import time

import pytest
from prefect.settings import PREFECT_API_URL, temporary_settings
from prefect.states import Cancelled, Failed

from dialogbench.run import stopping
from flows import unit_worker, work

PARAMETERS = dict(config_path="c.yaml", overrides={"lake": "/nowhere"}, run_id="r1", unit="bot-a",
                  family_stages={}, token="t1")


@pytest.fixture
def closed(monkeypatch):
    """The unit's engines: nothing to close, counted."""
    from dialogbench.backends import engines

    calls = []
    monkeypatch.setattr(engines, "close_all", lambda: calls.append(1))
    return calls


def _ending(monkeypatch, ended_in, *, stop: bool):
    monkeypatch.setattr(work, "_unit", lambda *a: ended_in() if callable(ended_in) else ended_in)
    request = stopping.Request(signal.SIGTERM, time.monotonic(), 5.0) if stop else None
    monkeypatch.setattr(stopping, "requested", lambda: request)
    return work.work_unit.fn(**PARAMETERS)


def test_a_unit_its_stopped_worker_ended_is_crashed_to_be_sent_again(monkeypatch, closed):
    ended = _ending(monkeypatch, Failed(message="botchat: stopped"), stop=True)
    assert ended.type.value == "CRASHED" and "its task worker was stopped (SIGTERM)" in ended.message

    def stopped():
        raise stopping.Stopped()

    assert _ending(monkeypatch, stopped, stop=True).type.value == "CRASHED"
    assert len(closed) == 2  # its engines closed either way


def test_a_unit_ends_as_it_would_when_its_worker_was_not_stopped_or_it_was_withdrawn(monkeypatch, closed):
    assert _ending(monkeypatch, ["report"], stop=True) == ["report"]  # it finished before the stop took it
    assert _ending(monkeypatch, Cancelled(message="withdrawn"), stop=True).type.value == "CANCELLED"
    assert _ending(monkeypatch, Failed(message="a bug"), stop=False).type.value == "FAILED"

    def broken():
        raise RuntimeError("a bug")

    with pytest.raises(RuntimeError, match="a bug"):
        _ending(monkeypatch, broken, stop=False)


def test_a_worker_without_a_server_to_take_units_from_says_so(capsys):
    with temporary_settings({PREFECT_API_URL: None}):
        assert unit_worker.main([]) == 2
    assert "set PREFECT_API_URL to the dispatching run's server" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        unit_worker.main(["--limit", "0"])


def test_a_run_sending_units_to_task_workers_without_a_server_of_its_own_is_refused(make_config, lake_dir):
    """On Prefect's temporary server (no PREFECT_API_URL) no worker could take a unit: the run is refused when it
    splits its units, before it computes anything (the seeds come after)."""
    from dialogbench.run.registry import run_for
    from tasks.dispatch import _TaskWorkers, split_units
    from tests.conftest import config_dict

    run = run_for(make_config({**config_dict(lake_dir), "dispatch": {"task_workers": True}}))
    with temporary_settings({PREFECT_API_URL: None}):
        with pytest.raises(ValueError, match=r"dispatch.task_workers: .*no PREFECT_API_URL"):
            split_units.fn(run, run.stage_names())
        with pytest.raises(ValueError, match=r"dispatch.task_workers: .*no PREFECT_API_URL"):
            _TaskWorkers(client=None)
    with temporary_settings({PREFECT_API_URL: "http://127.0.0.1:9/api"}):
        assert split_units.fn(run, run.stage_names())[1]  # units, with a server set
