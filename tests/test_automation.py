"""The notification automation is one Prefect accepts (its trigger, the flow it matches, its action) and renders a
working link: its body, rendered by Prefect's own server templating as the send-notification action does, links the
flow run in the UI when the server runs as the README starts it (with PREFECT_UI_URL set; without it Prefect renders
`None`), and quotes the state message that carries the report's URL."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
RENDER = """
import asyncio, uuid, yaml
from prefect.server.events.jinja_filters import all_filters
from prefect.server.schemas.core import FlowRun
from prefect.server.schemas.states import Failed
from prefect.server.utilities.user_templates import register_user_template_filters, render_user_template
register_user_template_filters(all_filters)
body = yaml.safe_load(open("automations/notify-on-failure.yaml"))["automations"][0]["actions"][0]["body"]
run = FlowRun(id=uuid.UUID(int=7), name="20261126T010000Z-abc123", flow_id=uuid.uuid4(), tags=["config:nightly"],
              state=Failed(message="2 cell(s) failed. Report: http://gpu-box:8765/runs/20261126T010000Z-abc123/report.html"))
print(asyncio.run(render_user_template(body, {"flow_run": run})))
"""


def server_env() -> dict[str, str]:
    """The variables the README sets on the command that starts the Prefect server."""
    line = next(line for line in (REPO / "README.md").read_text().splitlines() if "prefect server start" in line)
    words = shlex.split(line, comments=True)
    return dict(w.split("=", 1) for w in words[:words.index(next(w for w in words if "prefect" in w))] if "=" in w)


def render(extra: dict[str, str]) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update({"PREFECT_HOME": str(REPO / ".prefect-test-unused"), **extra})
    done = subprocess.run([sys.executable, "-c", RENDER], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_notification_links_the_run_and_its_report():
    readme = server_env()
    assert readme.get("PREFECT_UI_URL", "").startswith("http"), "the README starts the server without PREFECT_UI_URL"
    body = render(readme)
    assert f"{readme['PREFECT_UI_URL'].rstrip('/')}/runs/flow-run/00000000-0000-0000-0000-000000000007" in body
    assert "Report: http://gpu-box:8765/runs/20261126T010000Z-abc123/report.html" in body
    assert not re.search(r"\bNone\b", body)
    assert re.search(r"\bNone\b", render({}))  # what a server started without it renders


def test_the_documented_automation_is_a_valid_prefect_automation():
    from prefect.events.schemas.automations import AutomationCore

    [spec] = yaml.safe_load((REPO / "automations" / "notify-on-failure.yaml").read_text())["automations"]
    automation = AutomationCore.model_validate(spec)
    assert automation.trigger.expect == {"prefect.flow-run.Failed", "prefect.flow-run.Crashed"}
    assert automation.trigger.match_related.root == {"prefect.resource.role": "flow",
                                                     "prefect.resource.name": "dialogbench"}
    assert [a.type for a in automation.actions] == ["send-notification"]
