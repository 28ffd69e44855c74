"""What ``flows/prefect_internals.py`` relies on, checked against the installed Prefect: an upgrade that changes a
class, method, signature, registry or call site one of its patches reaches into fails here, naming the patch, instead
of breaking a run silently. And no other module of ``dialogbench/``, ``flows/`` or ``tasks/`` touches a private
Prefect name (an AST scan), so the next patch lands in that one module, with its note and a check here."""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import prefect
import psutil
import pytest
from prefect import Flow
from prefect.client.schemas.objects import StateDetails
from prefect.exceptions import MissingResult
from prefect.states import Completed

from dialogbench.backends import watchdog
from flows import prefect_internals as internals
from tests.conftest import REPO_ROOT

THE_MODULE = REPO_ROOT / "flows" / "prefect_internals.py"
OURS = ("dialogbench", "flows", "tasks")
# the patches, as flows/prefect_internals.py numbers and names them
OWN_SESSION = "1. own-session temporary server"
FOR_GOOD = "2. temporary server stopped for good"
DRAIN = "3. API queues drained"
REDACTED = "4. redacted flow parameters (RedactedParametersFlow)"
VERSION = "5. flow version of the function's own file"
PULLING = "6. task workers that take a unit only when they have room (PullingTaskWorker)"
PORT = -37  # a key no real server has: the tests' own instances live there, and the registry is restored after
SLEEPER = [sys.executable, "-c", "import time; time.sleep(30)"]


def broken(patch: str, what: str, module: str = "flows/prefect_internals.py") -> str:
    return (f"Prefect {prefect.__version__} changed what {module} relies on (patch {patch!r}, written against "
            f"Prefect {internals.WRITTEN_AGAINST}): {what}. Read the patch's note there: rework or drop it, then "
            "update this check.")


@pytest.fixture
def server_module():
    """Prefect's server module, its class-level registry of temporary servers restored after the test."""
    from prefect.server.api import server

    instances = getattr(getattr(server, "SubprocessASGIServer", None), "_instances", None)
    saved = dict(instances) if isinstance(instances, dict) else None
    yield server
    if saved is not None:
        instances.clear()
        instances.update(saved)


def test_the_notes_were_checked_against_the_pinned_prefect():
    pin = re.search(r'"prefect==([^"]+)"', (REPO_ROOT / "pyproject.toml").read_text()).group(1)
    assert internals.WRITTEN_AGAINST == pin, (
        f"pyproject.toml pins prefect=={pin}, but flows/prefect_internals.py's notes were checked against "
        f"{internals.WRITTEN_AGAINST}: read each patch's note against {pin} (the other checks here say which broke), "
        "then set WRITTEN_AGAINST")


# 1. Own-session temporary server ---------------------------------------------------------------------------------

def test_the_temporary_server_is_one_instance_per_port_in_a_class_level_dict(server_module):
    assert internals.SERVER_MODULE == server_module.__name__
    cls = getattr(server_module, "SubprocessASGIServer", None)
    assert isinstance(cls, type), broken(OWN_SESSION, "prefect.server.api.server.SubprocessASGIServer is gone")
    instances = cls.__dict__.get("_instances")
    assert isinstance(instances, dict), broken(OWN_SESSION, "SubprocessASGIServer._instances is no longer a dict")
    instances.pop(None, None)
    default = cls()
    assert instances.get(None) is default and cls() is default, broken(
        OWN_SESSION, "SubprocessASGIServer() is no longer the one instance _instances[None] holds")
    assert default.server_process is None and not default.running, broken(
        OWN_SESSION, "making a SubprocessASGIServer starts something")
    on_port = cls(port=PORT)
    assert instances.get(PORT) is on_port is not default, broken(OWN_SESSION, "_instances is no longer keyed by port")


def test_every_prefect_client_takes_the_default_temporary_server():
    """The own-session server replaces the instance under the key None: every client must reach the temporary
    server through ``SubprocessASGIServer()``, with no port."""
    root = Path(prefect.__file__).parent
    calls = {}
    for path in root.rglob("*.py"):
        where = path.relative_to(root).as_posix()
        if where.startswith("testing/") or where == "server/api/server.py":
            continue
        for call in re.finditer(r"\bSubprocessASGIServer\(([^)]*)\)", path.read_text(encoding="utf-8")):
            calls.setdefault(where, []).append(call.group(1).strip())
    assert "client/orchestration/__init__.py" in calls, broken(
        OWN_SESSION, "get_client no longer starts its temporary server through SubprocessASGIServer()")
    with_args = {where: args for where, args in calls.items() if any(args)}
    assert not with_args, broken(OWN_SESSION, f"clients make their temporary server with arguments: {with_args}")


def test_the_server_command_is_started_by_the_method_the_subclass_overrides(server_module):
    cls = server_module.SubprocessASGIServer
    method = cls.__dict__.get("_run_uvicorn_command")
    assert callable(method), broken(OWN_SESSION, "SubprocessASGIServer._run_uvicorn_command is gone")
    assert list(inspect.signature(method).parameters) == ["self"], broken(
        OWN_SESSION, f"_run_uvicorn_command's signature is now {inspect.signature(method)}")
    assert "self._run_uvicorn_command()" in inspect.getsource(cls.start), broken(
        OWN_SESSION, "SubprocessASGIServer.start no longer starts the server through self._run_uvicorn_command()")
    assert "subprocess.Popen(" in inspect.getsource(method), broken(
        OWN_SESSION, "_run_uvicorn_command no longer starts uvicorn with its module's subprocess.Popen")
    assert server_module.subprocess is subprocess, broken(
        OWN_SESSION, "prefect.server.api.server.subprocess is no longer the subprocess module")


def test_the_own_session_server_is_the_one_prefects_clients_find(server_module):
    cls = server_module.SubprocessASGIServer
    cls._instances.pop(None, None)
    internals.own_session_temporary_server()
    found = cls()  # what get_client and the events and logs clients call
    assert type(found).__name__ == "_OwnSessionServer", broken(
        OWN_SESSION, f"SubprocessASGIServer() gives a {type(found).__name__}")
    assert "_instances" not in type(found).__dict__ and found.server_process is None
    internals.own_session_temporary_server()  # a second call keeps the one in place
    assert cls() is found


def test_the_own_session_server_starts_prefects_command_in_a_session_of_its_own(server_module, monkeypatch):
    started, guarded, real_popen = [], [], subprocess.Popen

    def popen(*args, **kwargs):  # Prefect's uvicorn command, recorded; a sleeper started in its place, as asked
        started.append((args, kwargs))
        return real_popen(SLEEPER, start_new_session=kwargs.get("start_new_session", False))

    monkeypatch.setattr(subprocess, "Popen", popen)
    monkeypatch.setattr(watchdog, "guard", guarded.extend)
    server = internals.own_session_server_class()(port=PORT)
    process = server._run_uvicorn_command()
    try:
        assert len(started) == 1, broken(OWN_SESSION, f"_run_uvicorn_command called Popen {len(started)} times")
        args, kwargs = started[0]
        command = kwargs.get("args", args[0] if args else [])
        assert "uvicorn" in command, broken(OWN_SESSION, f"_run_uvicorn_command started {command}")
        assert kwargs.get("start_new_session") is True, broken(
            OWN_SESSION, "Popen no longer gets start_new_session=True through the swapped subprocess module")
        assert os.getsid(process.pid) == process.pid  # the server's own session: a Ctrl-C's SIGINT misses it
        assert [p.pid for p in guarded] == [process.pid]  # the engines' watchdog kills it if the run dies
        assert server_module.subprocess is subprocess  # the swap is undone
    finally:
        process.kill()
        process.wait()


# 2. Temporary server stopped for good ----------------------------------------------------------------------------

def test_stop_forgets_the_instance(server_module):
    """Why the stopped run puts ``_NoServer`` in place: a forgotten server is started anew by the next client."""
    cls = server_module.SubprocessASGIServer
    cls(port=PORT).stop()
    assert PORT not in cls._instances, broken(
        FOR_GOOD, "SubprocessASGIServer.stop no longer forgets the instance (_NoServer may no longer be needed)")


def test_a_stopped_run_stops_the_temporary_server_for_good(server_module):
    cls = server_module.SubprocessASGIServer
    cls._instances.pop(None, None)
    server = cls()
    process = server.server_process = subprocess.Popen(SLEEPER)
    server.running = True
    internals.stop_temporary_server_for_good()
    assert process.poll() is not None and server.server_process is None, broken(
        FOR_GOOD, "SubprocessASGIServer.stop no longer stops the server's process")
    replacement = cls()  # what the next client gets
    assert isinstance(replacement, internals._NoServer), broken(
        FOR_GOOD, f"SubprocessASGIServer() after the stop gives a {type(replacement).__name__}, not _NoServer")
    with pytest.raises(RuntimeError, match="not started again"):
        replacement.start()


# 3. API queues drained -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("module, name", [("prefect.logging.handlers", "APILogWorker"),
                                          ("prefect.events.worker", "EventsWorker")])
def test_the_api_queues_drain_within_a_bound(module, name):
    worker = getattr(importlib.import_module(module), name, None)
    assert isinstance(worker, type), broken(DRAIN, f"{module}.{name} is gone")
    drain_all = inspect.getattr_static(worker, "drain_all", None)
    assert isinstance(drain_all, classmethod), broken(DRAIN, f"{name}.drain_all is no longer a classmethod")
    assert "timeout" in inspect.signature(worker.drain_all).parameters, broken(
        DRAIN, f"{name}.drain_all no longer takes a timeout")
    assert "timeout=timeout" in inspect.getsource(worker.drain_all), broken(
        DRAIN, f"{name}.drain_all no longer passes its timeout to the wait")


# 4. Redacted flow parameters -------------------------------------------------------------------------------------

def test_prefects_flow_engine_stores_what_serialize_parameters_makes():
    from prefect import flow_engine

    assert list(inspect.signature(Flow.serialize_parameters).parameters) == ["self", "parameters"], broken(
        REDACTED, f"Flow.serialize_parameters's signature is now {inspect.signature(Flow.serialize_parameters)}")
    for engine in ("FlowRunEngine", "AsyncFlowRunEngine"):
        create = getattr(getattr(flow_engine, engine, None), "create_flow_run", None)
        assert create is not None, broken(REDACTED, f"prefect.flow_engine.{engine}.create_flow_run is gone")
        assert "parameters=self.flow.serialize_parameters(" in inspect.getsource(create), broken(
            REDACTED, f"{engine}.create_flow_run no longer stores the parameters Flow.serialize_parameters makes: "
                      "a flow run's parameters would be stored unredacted")


# 5. Flow version of the function's own file ----------------------------------------------------------------------

def _a_flow_function() -> None:
    """A plain function: Prefect gives a flow of it the default version of this file."""


def test_a_wrapped_flow_gets_the_version_prefect_gives_its_file():
    expected = Flow(fn=_a_flow_function).version
    assert internals.flow_version(__file__) == expected, broken(
        VERSION, "Prefect's default flow version is no longer the md5 of the function's file")
    from flows.pipeline import pipeline

    assert pipeline.version == internals.flow_version(str(REPO_ROOT / "flows" / "pipeline.py"))


# 6. Task workers that take a unit only when they have room ------------------------------------------------------

def test_the_task_worker_has_what_the_pulling_worker_overrides_and_calls():
    from prefect.client.subscriptions import Subscription
    from prefect.task_worker import TaskWorker

    for name in ("_subscribe_to_task_scheduling", "_acquire_token", "_safe_submit_scheduled_task_run",
                 "handle_sigterm"):
        assert callable(getattr(TaskWorker, name, None)), broken(PULLING, f"TaskWorker.{name} is gone")
    init = inspect.getsource(TaskWorker.__init__)
    for attribute in ("self._limiter", "self._client", "self.in_flight_task_runs", "with_options("):
        assert attribute in init, broken(PULLING, f"TaskWorker.__init__ no longer sets or uses {attribute}")
    assert "self._runs_task_group" in inspect.getsource(TaskWorker.__aenter__), broken(
        PULLING, "TaskWorker.__aenter__ no longer makes _runs_task_group")
    assert "_register_signal(signal.SIGTERM, self.handle_sigterm)" in inspect.getsource(TaskWorker.astart), broken(
        PULLING, "TaskWorker.astart no longer puts handle_sigterm in place for SIGTERM")
    for name in ("_ensure_connected", "websocket"):
        assert hasattr(Subscription, name), broken(PULLING, f"Subscription.{name} is gone")
    anext = inspect.getsource(Subscription.__anext__)
    assert "self._websocket = None" in anext and '"ack"' in anext, broken(
        PULLING, "Subscription.__anext__ no longer acknowledges on receipt or forgets a closed socket that way")


def test_the_server_sends_a_worker_its_next_task_run_only_after_its_ack():
    from prefect.server.api import task_runs

    source = inspect.getsource(task_runs.scheduled_task_subscription)
    sent, acked, taken = (source.find(s) for s in ("websocket.send_json(task_run", '"ack"', "subscribed_queue.get()"))
    assert -1 not in (sent, acked, taken) and taken < sent < acked, broken(
        PULLING, "the server's /task_runs/subscriptions/scheduled no longer waits for a worker's ack before taking "
                 "its next task run from the queue: withholding the ack would no longer keep a busy worker's units "
                 "for the others")
    assert "retry(task_run)" in source, broken(
        PULLING, "the server no longer puts an unacknowledged task run back when its worker's connection closes")


def test_the_worker_s_copies_of_its_task_keep_the_unit_s_key():
    import asyncio

    from flows.work import UNIT_TASK_KEY, work_unit
    from prefect.task_worker import TaskWorker

    async def keys(cls, **options):
        from prefect.settings import PREFECT_API_URL, temporary_settings

        with temporary_settings({PREFECT_API_URL: "http://127.0.0.1:9/api"}):  # a client is made, never used
            worker = cls(work_unit, limit=1, **options)
        return worker.task_keys, [t.task_key for t in worker.tasks]

    assert work_unit.task_key == UNIT_TASK_KEY
    served, copies = asyncio.run(keys(TaskWorker))
    assert served == {UNIT_TASK_KEY} and copies != [UNIT_TASK_KEY], broken(
        PULLING, "TaskWorker's copies of a task now keep its task_key: stable_task_key on them may be unneeded")
    served, copies = asyncio.run(keys(internals.pulling_task_worker_class(), on_signal=print))
    assert served == {UNIT_TASK_KEY} and copies == [UNIT_TASK_KEY]


# Public-surface workaround: tasks/returned.py ---------------------------------------------------------------------

def test_a_state_without_its_data_still_raises_missing_result():
    what = "the final state a retried duplicate transition gives back"
    assert "flow_run_id" in StateDetails.model_fields, broken(what, "StateDetails.flow_run_id is gone",
                                                              "tasks/returned.py")
    state = Completed()
    assert state.data is None
    try:
        state.result()
    except MissingResult:
        return
    pytest.fail(broken(what, "a state without its data no longer raises MissingResult (result_of may be unneeded)",
                       "tasks/returned.py"))


# No other module reaches into Prefect ----------------------------------------------------------------------------

INTERNAL_MODULES = ("prefect.server", "prefect.events.worker", "prefect.logging.handlers", "prefect.utilities",
                    "prefect.flow_engine", "prefect.task_engine", "prefect.engine", "prefect.testing")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _internal_module(module: str) -> bool:
    return (any(_private(part) for part in module.split("."))
            or any(module == m or module.startswith(m + ".") for m in INTERNAL_MODULES))


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _is_sys_modules(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "modules" and _root(node) == "sys"


def _module_string(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.split(".")[0] == "prefect":
        return node.value
    return None


def private_uses(source: str) -> list[str]:
    """Where ``source`` reaches past Prefect's public surface: an internal module imported, a private name
    imported or read off something of Prefect's, a Prefect class subclassed (its methods overridden), an attribute
    of Prefect's set, an internal module looked up by name."""
    tree = ast.parse(source)
    prefects, found = set(), []  # names bound to Prefect's modules, classes, functions
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "prefect":
                    prefects.add((alias.asname or alias.name).split(".")[0])
                    if _internal_module(alias.name):
                        found.append(f"line {node.lineno}: imports {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "prefect":
            if _internal_module(node.module):
                found.append(f"line {node.lineno}: imports from {node.module}")
            for alias in node.names:
                prefects.add(alias.asname or alias.name)
                if _private(alias.name):
                    found.append(f"line {node.lineno}: imports {node.module}.{alias.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and _root(node.value) in prefects:
            found.append(f"line {node.lineno}: reads {node.attr} of Prefect's {_root(node.value)}")
        elif isinstance(node, ast.ClassDef):
            found += [f"line {node.lineno}: {node.name} subclasses Prefect's {_root(base)}" for base in node.bases
                      if _root(base) in prefects]
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            found += [f"line {node.lineno}: sets an attribute of Prefect's {_root(t)}" for t in targets
                      if isinstance(t, (ast.Attribute, ast.Subscript)) and _root(t) in prefects]
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name in ("setattr", "delattr") and node.args and _root(node.args[0]) in prefects:
                found.append(f"line {node.lineno}: {name} on Prefect's {_root(node.args[0])}")
            looked_up = (name in ("import_module", "__import__") or
                         (isinstance(node.func, ast.Attribute) and _is_sys_modules(node.func.value)))
            module = _module_string(node.args[0]) if looked_up and node.args else None
            if module and _internal_module(module):
                found.append(f"line {node.lineno}: looks up {module}")
        elif isinstance(node, ast.Subscript) and _is_sys_modules(node.value):
            module = _module_string(node.slice)
            if module and _internal_module(module):
                found.append(f"line {node.lineno}: looks up {module}")
    return found


def test_no_other_module_reaches_into_prefect():
    found = {}
    for package in OURS:
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            if path != THE_MODULE:
                uses = private_uses(path.read_text(encoding="utf-8"))
                if uses:
                    found[path.relative_to(REPO_ROOT).as_posix()] = uses
    assert not found, (f"these modules reach past Prefect's public surface: {found}. Move each into "
                       "flows/prefect_internals.py with its note (what it patches, why, the Prefect version, the "
                       "upstream issue) and a check in tests/flows/test_prefect_internals.py")


def test_the_scan_finds_each_way_of_reaching_in():
    reaching = """
import sys, importlib
import prefect.server.api.server as srv
from prefect.logging.handlers import APILogWorker
from prefect.flows import _private_helper
from prefect import Flow
from prefect.settings import get_current_settings

class Mine(Flow):
    def serialize_parameters(self, parameters):
        return parameters

srv.subprocess = None
srv.SubprocessASGIServer._instances[None] = None
get_current_settings()._cache
setattr(Flow, "serialize_parameters", None)
sys.modules.get("prefect.server.api.server")
sys.modules["prefect._internal.concurrency"]
importlib.import_module("prefect.utilities.hashing")
"""
    found = private_uses(reaching)
    expected = ["imports prefect.server.api.server", "imports from prefect.logging.handlers",
                "imports prefect.flows._private_helper", "Mine subclasses Prefect's Flow",
                "sets an attribute of Prefect's srv", "reads _instances of Prefect's srv",
                "reads _cache of Prefect's get_current_settings", "setattr on Prefect's Flow",
                "looks up prefect.server.api.server", "looks up prefect._internal.concurrency",
                "looks up prefect.utilities.hashing"]
    assert [e for e in expected if not any(e in f for f in found)] == []
    public = """
import logging, sys
from prefect import flow, get_run_logger
from prefect.context import FlowRunContext
from prefect.states import Completed
from tasks.redacted import flow as redacted_flow

class Local:
    _private = 1

logging.getLogger("prefect.server").setLevel(logging.WARNING)
FlowRunContext.get().flow_run.id
sys.modules.get("dialogbench.run.config")
Local()._private
"""
    assert private_uses(public) == []


def test_the_scan_finds_the_patches_the_module_holds():
    found = " | ".join(private_uses(THE_MODULE.read_text(encoding="utf-8")))
    for patch in ("imports from prefect.server.api", "subclasses Prefect's _server", "sets an attribute of Prefect's "
                  "_server", "imports from prefect.events.worker", "imports from prefect.logging.handlers",
                  "RedactedParametersFlow subclasses Prefect's Flow"):
        assert patch in found
