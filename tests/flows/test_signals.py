"""What a run imports before it starts (``flows.pipeline``, then ``flows/signals.py``'s ``own_session_server``, as
``dialogbench run`` calls them): Prefect's server module (seconds to import) only when the run starts Prefect's
temporary server, i.e. when no PREFECT_API_URL names one, and then that server is the own-session one."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import REPO_ROOT

PROBE = ("import sys, flows.pipeline, flows.signals as s; s.own_session_server(); "
         "m = sys.modules.get('prefect.server.api.server'); "
         "print(m is not None, type(m.SubprocessASGIServer._instances.get(None)).__name__ if m else None)")


def _probe(env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_a_run_against_a_server_does_not_import_prefects_server(tmp_path):
    env = {**os.environ, "PREFECT_HOME": str(tmp_path), "PREFECT_API_URL": "http://127.0.0.1:9/api"}
    assert _probe(env) == "False None"


def test_a_run_without_a_server_makes_its_temporary_server_its_own_session_s(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    assert _probe({**env, "PREFECT_HOME": str(tmp_path)}) == "True _OwnSessionServer"
