"""A run stopped by SIGTERM or SIGINT, under Prefect (``dialogbench/run/stopping.py`` does the stopping;
docs/reliability.md, "Stopping a run"). Wiring only:

- each flow's body runs with dialogbench's signal handlers (``stop_on_signals``): Prefect's flow engine puts its own
  SIGTERM handler in place for every flow run, which raises in the flow, waits for the chunk in flight without a
  bound, marks the run Crashed and kills the process with the default handler, leaving the CLI's temporary server
  running;
- a stopped flow ends Cancelled with the stop's message (``cancelled``), or, if the stop escalates, is marked
  Cancelled through the API before the process exits (``cancelled_on_escalation``);
- the CLI's temporary Prefect server starts in a session of its own (``own_session_server``), so a Ctrl-C in the
  terminal (SIGINT to the whole foreground process group) reaches the run, which records its stop there, and not the
  server; it is stopped before a stopped process exits (``stop_temporary_server``), and the engines' watchdog
  (``dialogbench/backends/watchdog.py``) kills it if the run's process dies any other way (SIGKILL, the OOM killer).

The last point reaches into Prefect's internals (its temporary server's class, its API queues): that part is
``flows/prefect_internals.py``'s, with why and what it relies on.
"""

from __future__ import annotations

import functools
import logging
from contextlib import contextmanager
from typing import Any, ContextManager, Iterator

from prefect.context import FlowRunContext
from prefect.states import Cancelled, State

from dialogbench.run import stopping
from flows import prefect_internals


def stop_on_signals(timeout_s: float | None = None) -> ContextManager[None]:
    """For the block, SIGTERM and SIGINT stop the run (first) or stop it now (second), whatever handler Prefect put
    in place; the handlers it replaced are back afterwards."""
    return stopping.handling(timeout_s)


def cancelled() -> State:
    """The final state of a flow the stop ended: Cancelled, saying by which signal, after how long, what was kept."""
    stop = stopping.requested()
    return Cancelled(message=stopping.message(stop) if stop else "Stopped.")


@contextmanager
def cancelled_on_escalation() -> Iterator[None]:
    """While the block runs, a stop that escalates (the process exits within seconds, without ending its flows)
    first marks the current flow run Cancelled through the API."""
    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        yield
        return
    remove = stopping.on_escalate(functools.partial(mark_cancelled, context.flow_run.id))
    try:
        yield
    finally:
        remove()


def mark_cancelled(flow_run_id: Any) -> None:
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        client.set_flow_run_state(flow_run_id, cancelled(), force=True)


def own_session_server() -> None:
    """Make the temporary server Prefect's clients start (when no ``PREFECT_API_URL`` is set) start in a session
    of its own (``prefect_internals.own_session_temporary_server``). With ``PREFECT_API_URL`` set there is no
    temporary server, and nothing to do."""
    from prefect.settings import get_current_settings

    if get_current_settings().api.url:
        return
    prefect_internals.own_session_temporary_server()


EVENTS_LOGGER = "prefect.events.utilities"  # where Prefect's emit_event logs an event it could not send


def _not_an_event_after_the_stop(record: logging.LogRecord) -> bool:
    return not record.getMessage().startswith("Error emitting event")


def stop_temporary_server() -> None:
    """Send the logs and events still queued (a few seconds at most), then stop the temporary server, if this
    process started one, for good; ``atexit`` would, but a stopped process exits without running it.

    An event a thread of the run emits while, or after, its events service drains finds that service stopped, and
    Prefect logs it with a traceback ("Error emitting event: ...", seen once in CI after a vLLM run's SIGTERM): the
    event is lost either way, since the run is going and its server with it, so that line is dropped and the stop
    ends with its one line."""
    logging.getLogger(EVENTS_LOGGER).addFilter(_not_an_event_after_the_stop)
    prefect_internals.drain_api_queues(timeout_s=1)
    prefect_internals.stop_temporary_server_for_good()
