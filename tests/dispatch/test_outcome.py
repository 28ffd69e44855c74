"""``dialogbench.dispatch.outcome`` and ``tasks.dispatch.ended``: a unit withdrawn by its run ends Cancelled (no page,
not sent again), one stopped by a transient API error ends Crashed (sent again), anything else Failed; a unit process
of this box says which by its exit code, and ``box.state`` reads it back."""

from __future__ import annotations

import httpx
import pytest
from prefect.states import Failed

from dialogbench.dispatch import outcome, units as dispatch
from tasks.dispatch import ended


def status_error(code: int) -> httpx.HTTPStatusError:
    request = httpx.Request("POST", "http://127.0.0.1:4200/api/flow_runs/")
    return httpx.HTTPStatusError(f"Server error '{code}'", request=request, response=httpx.Response(code, request=request))


def raised_from(outer: Exception, inner: Exception) -> Exception:
    try:
        try:
            raise inner
        except Exception as exc:
            raise outer from exc
    except Exception as exc:
        return exc


@pytest.mark.parametrize("error, state", [
    (dispatch.Withdrawn("attempt 1234 of bot-a was withdrawn (the dispatching run stopped)"), "CANCELLED"),
    (status_error(503), "CRASHED"),   # the Prefect server while its SQLite database is locked
    (status_error(429), "CRASHED"),
    (httpx.ReadTimeout("timed out"), "CRASHED"),
    (httpx.ConnectError("connection refused"), "CRASHED"),
    (raised_from(RuntimeError("the family's subflow failed"), status_error(502)), "CRASHED"),
    (ExceptionGroup("chunks", [ValueError("bad row"), httpx.ReadError("reset")]), "CRASHED"),
    (status_error(404), "FAILED"),
    (status_error(422), "FAILED"),
    (dispatch.Superseded("attempt 1234 of bot-a was superseded"), "FAILED"),  # sent again already: this one is over
    (ValueError("a bug"), "FAILED"),
    (None, "FAILED"),
])
def test_each_ending_is_named_by_what_stopped_the_unit(error, state):
    assert outcome.ending(error)[0] == state


def test_a_withdrawn_unit_wins_over_a_transient_error_it_also_met():
    error = raised_from(dispatch.Withdrawn("withdrawn (the dispatching run stopped)"), status_error(503))
    assert outcome.ending(error) == ("CANCELLED", "withdrawn (the dispatching run stopped)")


def test_a_unit_process_exit_code_reads_back_as_its_state():
    for state in ("COMPLETED", "FAILED", "CRASHED", "CANCELLED"):
        assert outcome.exit_state(outcome.EXIT[state]) == state
    assert outcome.exit_state(-9) == "CRASHED"  # killed by a signal
    assert outcome.exit_state(143) == "FAILED"  # anything else


def test_the_work_flow_ends_as_its_cause_says():
    """``ended`` for an exception, or for a family subflow's failed state (its exception looked at)."""
    stopped = ended("bot-a", "botchat: withdrawn", Failed(message="x", data=dispatch.Withdrawn("run stopped")))
    assert stopped.is_cancelled() and stopped.message.startswith("bot-a: botchat: withdrawn")
    flaky = ended("bot-a", "HTTPStatusError: 503", status_error(503))
    assert flaky.is_crashed() and "a transient error, sent again" in flaky.message
    broken = ended("bot-a", "botchat: boom", Failed(message="boom", data=ValueError("boom")))
    assert broken.is_failed() and broken.message == "bot-a: botchat: boom"
