"""A run whose final-state requests Prefect sends twice still reports what it computed (``tasks/returned.py``).

CI once saw `dialogbench run` end with ``MissingResult`` on a loaded machine: the API client's request setting a
family subflow's Completed state timed out after the server had committed it, the client sent it again, the server
rejected the duplicate and answered with its own copy of the state, without the value. Here every flow run's first
final-state request is committed and then answered with a read timeout (the response is dropped), so Prefect's own
retry meets that rejection for the pipeline and each family subflow; the run must still succeed and report its
stages."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.e2e.conftest import REPO, cli_env

pytestmark = pytest.mark.slow

DROP_FIRST_FINAL_ANSWER = textwrap.dedent("""
    import json, sys
    import httpx

    send, seen = httpx.Client.send, set()

    def dropping(self, request, *args, **kwargs):
        response = send(self, request, *args, **kwargs)
        path = request.url.path
        if path.endswith("/set_state") and "/flow_runs/" in path and path not in seen:
            body = json.loads(request.content or b"{}")
            if body.get("state", {}).get("type") in ("COMPLETED", "FAILED"):
                seen.add(path)
                # straight to the process's stderr: inside a flow (log_prints) a print is a Prefect INFO line, which
                # the CLI's terminal leaves to the UI unless --verbose
                sys.__stderr__.write(f"dropped the answer to {body['state']['type']} of {path}\\n")
                sys.__stderr__.flush()
                raise httpx.ReadTimeout("answer dropped by the test", request=request)
        return response

    httpx.Client.send = dropping
    from dialogbench.cli import main
    sys.exit(main(sys.argv[1:]))
""")


def test_a_run_whose_final_states_were_sent_twice_reports_its_stages(scripted_config, tmp_path):
    config = scripted_config(limit=2, n=(4,))
    done = subprocess.run([sys.executable, "-c", DROP_FIRST_FINAL_ANSWER, "run", "--config", str(config)],
                          cwd=REPO, env=cli_env(tmp_path), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    dropped = [line for line in done.stderr.splitlines() if "dropped the answer to COMPLETED" in line]
    assert len(dropped) >= 2, done.stderr[-3000:]  # the pipeline's and at least one family subflow's
    assert "MissingResult" not in done.stderr
    assert "generate:bot-a" in done.stdout and "botchat_unieval" in done.stdout, done.stdout  # its stage reports
