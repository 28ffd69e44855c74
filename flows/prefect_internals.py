"""Every use dialogbench makes of Prefect's internals, in one place (issue 37). Prefect's public surface (``prefect``,
``prefect.context``, ``prefect.states``, ``prefect.settings``, ``prefect.exceptions``, the client) is used where it
is needed; what reaches past it (a private name, a subclass overriding a method Prefect's engine calls, a module
attribute swapped, a class-level registry written) lives here and nowhere else, so that a Prefect upgrade has one
module to break. ``tests/flows/test_prefect_internals.py`` checks, against the installed Prefect, everything each patch
below relies on, and fails naming the patch when an upgrade changes it; it also fails when another module of
``dialogbench/``, ``flows/`` or ``tasks/`` touches a private Prefect name.

Written against Prefect 3.7.7 (``WRITTEN_AGAINST``, the version pyproject.toml pins). The patches:

1. Own-session temporary server (``own_session_temporary_server``). Patches ``SubprocessASGIServer``
   (``prefect.server.api.server``): a subclass overriding ``_run_uvicorn_command`` swaps that module's ``subprocess``
   for the time of the call so its ``subprocess.Popen`` starts uvicorn with ``start_new_session=True``, and
   registers itself in the class-level ``_instances`` under the default key ``None``, where every Prefect client
   looks for the temporary server (``SubprocessASGIServer()``). Why: Prefect starts the server in the run's process
   group, so a Ctrl-C in the terminal (SIGINT to the whole foreground group) kills the server too and the run cannot
   record its stop; out of the group, the engines' watchdog (``dialogbench/backends/watchdog.py``) kills it when the
   run's process dies. Prefect has no option for either. Upstream: no upstream issue found (PrefectHQ/prefect
   PR #14722 introduced ``SubprocessASGIServer`` and its one instance per port, with no such option).
2. Temporary server stopped for good (``stop_temporary_server_for_good``, ``_NoServer``). Reads and writes
   ``SubprocessASGIServer._instances[None]``. Why: ``SubprocessASGIServer.stop`` forgets the instance, and the next
   client (a log or event still queued, a thread the stop abandoned) would start a new temporary server, outside
   the run's session and unwatched, that outlives the run; a stopped run puts ``_NoServer`` in its place, which
   refuses to start. Prefect's own ``prefect.testing.utilities.prefect_test_harness`` writes ``_instances[None]``
   the same way. Upstream: no upstream issue found.
3. API queues drained (``drain_api_queues``). Calls ``drain_all(timeout=...)`` of ``APILogWorker``
   (``prefect.logging.handlers``) and ``EventsWorker`` (``prefect.events.worker``), services whose ``drain_all``
   comes from ``prefect._internal.concurrency.services``. Why: a stopped run exits without ``atexit``, where Prefect
   drains them, and its logs and events would be lost; the public ``APILogHandler.flush`` drains logs only and
   waits 5 s. Upstream: no upstream issue found; Prefect drains ``APILogWorker`` the same way before stopping
   its test server (PrefectHQ/prefect PR #14854).
4. Redacted flow parameters (``RedactedParametersFlow``). Subclasses ``prefect.Flow`` and overrides
   ``serialize_parameters``, which Prefect's flow engine calls to make the parameters it stores for a flow run
   (``FlowRunEngine.create_flow_run``). Why: a family subflow takes the whole ``Config`` and Prefect stores its
   parameters as given, secrets included; Prefect offers no hook to redact them (it masks pydantic ``SecretStr``
   values only, and the config's secrets are plain strings). Upstream: PrefectHQ/prefect#11679 (masking SecretStr flow run parameters),
   #11972 and #16888 (flow parameters shown in the UI).
5. Flow version of the function's own file (``flow_version``). Mirrors, without importing it, how ``Flow``
   computes its default version (``prefect.utilities.hashing.file_hash``: md5 of the source file's bytes), so no
   module imports ``prefect.utilities``. Why: the flows of ``tasks/redacted.py`` wrap their function, and Prefect
   would hash the wrapper's file instead of the flow's. Upstream: no upstream issue found.

6. Task workers that take a unit only when they have room (``PullingTaskWorker``, ``stable_task_key``). Subclasses
   ``prefect.task_worker.TaskWorker`` and overrides ``_subscribe_to_task_scheduling`` (the loop that reads the
   server's ``/task_runs/subscriptions/scheduled`` websocket, through ``prefect.client.subscriptions.Subscription``
   and its ``_ensure_connected`` and ``websocket``), calling its ``_acquire_token``,
   ``_safe_submit_scheduled_task_run``, ``_limiter``, ``_runs_task_group`` and ``_client``; overrides
   ``handle_sigterm``; sets the ``task_key`` of the task and of the worker's copies of it (``TaskWorker.__init__``
   copies each task with ``with_options``, which makes the key again). Why: the server sends a worker its next task
   run as soon as the worker acknowledges the last, and Prefect's worker acknowledges on receipt, then waits for
   room (``limit``) holding it: a busy worker takes a second unit while another worker idles (seen: two units
   queued one after the other on one of two workers). This one acknowledges a task run only when it has room
   again, so the server gives it no other before; a task run the server sent again after a dropped connection,
   another worker already running it, is not run twice. Prefect's own SIGTERM handler exits at once, leaving the
   unit in flight to a thread nobody waits for; a task's default key hashes its code object, the checkout's path
   in it, so a worker started elsewhere would not take the dispatching run's units. Upstream: no upstream issue
   found.

Workarounds that use Prefect's public surface only stay where they are, with their notes there:
``tasks/returned.py`` (a final state that comes back without its value, ``MissingResult``, after the server
rejected a retried duplicate transition: the rule PrefectHQ/prefect PR #11695 added), ``tasks/subflows.py``
(subflows without heartbeat threads: the public ``PREFECT_FLOWS_HEARTBEAT_FREQUENCY`` setting),
``dialogbench/commands/run.py`` (``prefect.exceptions.TerminationSignal``) and ``dialogbench/cli.py`` (a filter on
the ``prefect`` loggers).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

from prefect import Flow

from dialogbench.text.redact import redact_tree

WRITTEN_AGAINST = "3.7.7"  # the Prefect version every note here was checked against (pyproject.toml pins it)
SERVER_MODULE = "prefect.server.api.server"  # seconds to import: imported only when a temporary server is wanted

log = logging.getLogger("dialogbench.stop")


# 1. Own-session temporary server ---------------------------------------------------------------------------------

class _NewSession:
    """``subprocess`` as Prefect's server module sees it while it starts its server: ``Popen`` in a new session."""

    def __init__(self, real: Any) -> None:
        self._real = real
        self.Popen = functools.partial(real.Popen, start_new_session=True)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


@functools.cache
def own_session_server_class() -> type:
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


def own_session_temporary_server() -> None:
    """Make the temporary server Prefect's clients start the own-session one: Prefect keeps one instance per port,
    and this one takes the place of the default (no port) before any client asks for it. Nothing starts here."""
    server_class = own_session_server_class()
    if None not in server_class._instances:
        server_class()


# 2. Temporary server stopped for good ----------------------------------------------------------------------------

class _NoServer:
    """What Prefect's clients find in place of the temporary server once a stopped run has stopped it: it refuses to
    start, so a client called after the stop fails (the run is exiting) instead of starting a server."""

    running = False
    server_process = None  # what stop_temporary_server_for_good looks at: nothing to stop

    def start(self, timeout: int | None = None) -> None:
        raise RuntimeError("the run is stopping: its temporary Prefect server was stopped and is not started again")


def stop_temporary_server_for_good() -> None:
    """Stop the temporary server, if this process started one, and leave ``_NoServer`` in its place."""
    started = sys.modules.get(SERVER_MODULE)  # not imported: no temporary server was started
    server = started.SubprocessASGIServer._instances.get(None) if started is not None else None
    if server is not None and server.server_process is not None:
        server.stop()
        # Prefect's ``stop`` forgets the instance, and the next client (a thread the stop abandoned, a log or event
        # still queued) would start a new temporary server, outside the run's session and unwatched: one that
        # starts while the exit kills the run's processes outlives it. A stopped run starts none again.
        started.SubprocessASGIServer._instances[None] = _NoServer()


# 3. API queues drained -------------------------------------------------------------------------------------------

def drain_api_queues(*, timeout_s: float) -> None:
    """Send the logs and events still queued for Prefect's API, waiting at most ``timeout_s`` for each queue."""
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    for worker in (APILogWorker, EventsWorker):
        try:
            worker.drain_all(timeout=timeout_s)
        except Exception as exc:  # the records are worth less than the exit
            log.debug("could not drain %s: %s", worker.__name__, exc)


# 4. Redacted flow parameters -------------------------------------------------------------------------------------

class RedactedParametersFlow(Flow):
    """A flow whose run records its parameters redacted (``redact_tree`` of what Prefect would store). A parameter
    that says what of it is worth recording (``recorded()``: the run's ``Run``, as its config and source) is recorded
    as that, not as Prefect's ``<Run>`` placeholder."""

    def serialize_parameters(self, parameters: dict[str, Any]) -> dict[str, Any]:
        shown = {k: (v.recorded() if callable(getattr(v, "recorded", None)) else v) for k, v in parameters.items()}
        return redact_tree(super().serialize_parameters(shown))


# 5. Flow version of the function's own file ----------------------------------------------------------------------

def flow_version(path: str) -> str:
    """The version Prefect gives a flow defined in ``path`` by default: the md5 of the file's bytes."""
    return hashlib.md5(Path(path).read_bytes(), usedforsecurity=False).hexdigest()


# 6. Task workers that take a unit only when they have room -------------------------------------------------------

def stable_task_key(task: Any, key: str) -> Any:
    """``task`` with ``key`` as its task key (what task workers subscribe to), whatever the path of its file."""
    task.task_key = key
    return task


def pulling_task_worker_class() -> type:
    """The worker class, made on first use (a dispatching run never needs it)."""
    import asyncio

    import orjson
    import websockets
    from prefect.client.schemas.objects import TaskRun
    from prefect.client.subscriptions import Subscription
    from prefect.settings import get_current_settings
    from prefect.task_worker import TaskWorker

    class PullingTaskWorker(TaskWorker):
        """A task worker serving one task (``limit`` runs at a time) that takes a task run only when it has room,
        and whose SIGTERM calls ``on_signal`` (the stop is the caller's)."""

        def __init__(self, task: Any, *, limit: int, on_signal: Any) -> None:
            super().__init__(task, limit=limit)
            for served in self.tasks:  # the copies __init__ made (with_options), their keys made again
                stable_task_key(served, task.task_key)
            self.on_signal = on_signal
            self.pulling = True

        def handle_sigterm(self, signum: int, frame: object) -> None:
            self.on_signal(signum, frame)

        async def _subscribe_to_task_scheduling(self) -> None:
            subscription = Subscription(model=TaskRun, path="/task_runs/subscriptions/scheduled", keys=self.task_keys,
                                        client_id=self.client_id, base_url=get_current_settings().api.url)
            while self.pulling:
                try:
                    await subscription._ensure_connected()
                    socket = subscription.websocket
                    task_run = TaskRun.model_validate_json(await socket.recv())
                except (ConnectionRefusedError, websockets.exceptions.ConnectionClosedError):
                    subscription._websocket = None  # what Subscription.__anext__ does: connect again
                    await asyncio.sleep(0.5)
                    continue
                if not self.pulling:
                    return  # stopping: unacknowledged, the server puts it back when the connection closes
                if await self._taken(task_run):
                    logging.getLogger("dialogbench.dispatch").info(
                        "task run %s is no longer Scheduled (sent here again after a connection closed): not run "
                        "again", task_run.id)
                elif await self._acquire_token(task_run.id):
                    self._runs_task_group.start_soon(self._safe_submit_scheduled_task_run, task_run)
                while self._limiter.available_tokens < 1 and self.pulling:  # no room: the server waits for the ack
                    await asyncio.sleep(0.2)
                if not self.pulling:
                    return  # unacknowledged: the server sends this worker nothing more
                try:
                    if subscription._websocket is socket:  # the server that sent it waits for this ack
                        await socket.send(orjson.dumps({"type": "ack"}).decode())
                except websockets.exceptions.ConnectionClosed:
                    subscription._websocket = None

        async def _taken(self, task_run: Any) -> bool:
            """Whether ``task_run`` has left Scheduled: a worker took it (it may have ended since) before the server
            sent it here again."""
            try:
                current = await self._client.read_task_run(task_run.id)
            except Exception:  # gone, or the server busy: Prefect's own submission decides
                return False
            return current.state is not None and current.state.type.value != "SCHEDULED"

    return PullingTaskWorker
