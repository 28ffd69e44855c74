"""A run stopped by SIGTERM or SIGINT, under Prefect (``dialogbench/stopping.py`` does the stopping;
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
"""

from __future__ import annotations

import functools
import logging
import subprocess
import sys
from contextlib import contextmanager
from typing import Any, ContextManager, Iterator

from prefect.context import FlowRunContext
from prefect.states import Cancelled, State

from dialogbench import stopping

log = logging.getLogger("dialogbench.stop")


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


class _NewSession:
    """``subprocess`` as Prefect's server module sees it while it starts its server: ``Popen`` in a new session."""

    def __init__(self, real: Any) -> None:
        self._real = real
        self.Popen = functools.partial(real.Popen, start_new_session=True)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


@functools.cache
def _own_session_server_class() -> type:
    """The server class, made on first use: Prefect's server module takes seconds to import, and a run against a
    server of the user's (``PREFECT_API_URL``) never needs it."""
    from prefect.server.api import server as _server

    class _OwnSessionServer(_server.SubprocessASGIServer):
        """Prefect's temporary API server (its command, settings and life cycle), in a session of its own, watched by
        the engines' watchdog: out of the run's process group, a kill of the group (``kill -9 -- -PGID``) would no
        longer reach it, so it goes when the run's process dies, however it dies."""

        def _run_uvicorn_command(self) -> subprocess.Popen:
            import psutil

            from dialogbench.backends import watchdog

            real = _server.subprocess
            _server.subprocess = _NewSession(real)
            try:
                process = super()._run_uvicorn_command()
            finally:
                _server.subprocess = real
            watchdog.guard([psutil.Process(process.pid)])
            return process

    return _OwnSessionServer


def own_session_server() -> None:
    """Make the temporary server Prefect's clients start (when no ``PREFECT_API_URL`` is set) start in a session
    of its own. Prefect keeps one instance per port; this one takes the place of the default (no port) before any
    client asks for it. With ``PREFECT_API_URL`` set there is no temporary server, and nothing to do."""
    from prefect.settings import get_current_settings

    if get_current_settings().api.url:
        return
    server_class = _own_session_server_class()
    if None not in server_class._instances:
        server_class()


def stop_temporary_server() -> None:
    """Send the logs and events still queued (a few seconds at most), then stop the temporary server, if this
    process started one; ``atexit`` would, but a stopped process exits without running it."""
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    for worker in (APILogWorker, EventsWorker):
        try:
            worker.drain_all(timeout=1)
        except Exception as exc:  # the records are worth less than the exit
            log.debug("could not drain %s: %s", worker.__name__, exc)
    started = sys.modules.get("prefect.server.api.server")  # not imported: no temporary server was started
    server = started.SubprocessASGIServer._instances.get(None) if started is not None else None
    if server is not None and server.server_process is not None:
        server.stop()
        # Prefect's ``stop`` forgets the instance, and the next client (a thread the stop abandoned, a log or event
        # still queued) would start a new temporary server, outside the run's session and unwatched: one that
        # starts while the exit kills the run's processes outlives it. A stopped run starts none again.
        started.SubprocessASGIServer._instances[None] = _NoServer()


class _NoServer:
    """What Prefect's clients find in place of the temporary server once a stopped run has stopped it: it refuses to
    start, so a client called after the stop fails (the run is exiting) instead of starting a server."""

    running = False
    server_process = None  # what stop_temporary_server looks at: nothing to stop

    def start(self, timeout: int | None = None) -> None:
        raise RuntimeError("the run is stopping: its temporary Prefect server was stopped and is not started again")
