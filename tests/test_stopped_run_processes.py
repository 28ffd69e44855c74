"""A stopped run leaves no process behind: what its exit kills includes a process started while it kills, and once it
has stopped its temporary Prefect server no client of Prefect's starts another, and an event that finds its events
service stopped prints no traceback. Each case runs in a subprocess: it kills that process's children and replaces
Prefect's temporary server there, not in the test's own process."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import REPO_ROOT

KILL_DURING_A_PASS = """
import subprocess, time
from dialogbench.run import stopping

first = subprocess.Popen(["sleep", "60"])
late = []
kill_all = stopping.kill_all

def kill_all_while_a_thread_starts_one(processes, timeout):
    if not late:  # a thread of the exiting run starts a process after the pass listed the others
        late.append(subprocess.Popen(["sleep", "60"]))
    kill_all(processes, timeout)

stopping.kill_all = kill_all_while_a_thread_starts_one
stopping.kill_descendants()
time.sleep(1)
alive = [p for p in (first, *late) if p.poll() is None]  # one reaped by the kill's wait polls as ended
print("started", 1 + len(late), "alive", [p.pid for p in alive])
for p in alive:
    p.kill()
"""

SERVER_STOPPED = """
import psutil
from flows.signals import own_session_server, stop_temporary_server
from prefect.client.orchestration import get_client

own_session_server()
with get_client(sync_client=True) as client:
    client.hello()  # the run's temporary server starts
stop_temporary_server()
import logging
events = logging.getLogger("prefect.events.utilities")  # Prefect's emit_event logs a send that failed here
record = lambda msg: events.makeRecord(events.name, logging.ERROR, "utilities.py", 0, msg, (), None)
print("event error dropped", not events.filter(record("Error emitting event: prefect.task-run.Cancelled")),
      "other kept", bool(events.filter(record("another error"))))
try:
    with get_client(sync_client=True) as client:  # a thread the stop abandoned, a log or event still queued
        client.hello()
    print("a client after the stop got a server")
except RuntimeError as exc:
    print("refused:", exc)
def command(p):
    try:
        return " ".join(p.cmdline())
    except psutil.Error:  # ended meanwhile
        return ""

servers = [p for p in psutil.Process().children(recursive=True) if "uvicorn" in command(p)]
print("servers", len(servers))
for p in servers:
    p.kill()
"""


def _run(code: str, env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_a_process_started_while_the_exit_kills_is_killed_too():
    out = _run(KILL_DURING_A_PASS, dict(os.environ))
    assert "started 2 alive []" in out, out


def test_a_stopped_run_starts_no_temporary_server_again(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    out = _run(SERVER_STOPPED, {**env, "PREFECT_HOME": str(tmp_path), "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
                                "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180"})  # as the CLI sets it
    assert "refused: the run is stopping" in out and "servers 0" in out, out
    # an event a thread emits as the events service drains is lost with the run; its traceback is not printed
    assert "event error dropped True other kept True" in out, out
