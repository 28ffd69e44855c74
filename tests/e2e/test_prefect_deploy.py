"""The README's scheduling steps ("Watching it in the Prefect UI"), run as written on a fresh Prefect server (its own
PREFECT_HOME, one server for the whole test): both work pools are created, `prefect deploy --all` accepts
prefect.yaml, and its three deployments register: the nightly one with its cron schedule and config parameter, the
ad-hoc one with its default config, the dispatched work's on its GPU pool. `prefect deploy` creates no work pool
(Prefect 3.7.7: a deployment whose pool is missing fails it, exit 1), so a step left out of the docs fails here."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import REPO, cli_env
from tests.e2e.prefect_server import PREFECT, running_server

pytestmark = pytest.mark.slow

# the README's scheduling steps, in its order, exactly as it writes them (before `prefect worker start`, which runs
# until stopped); each is checked to be in the docs below, so the two cannot drift apart
SCHEDULING = ["prefect work-pool create dialogbench --type process",
              "prefect work-pool create dialogbench-gpu --type process",
              "prefect deploy --all"]


def documented_in() -> list[Path]:
    """The docs that write the scheduling steps, each as a `code span`, in order (README.md, or a page under docs/
    once the README's sections move there)."""
    found = []
    for page in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        text = page.read_text(encoding="utf-8") if page.is_file() else ""
        where = [text.find(f"`{command}`") for command in SCHEDULING]
        if all(i >= 0 for i in where) and where == sorted(where):
            found.append(page)
    return found


def test_the_documented_scheduling_steps_deploy_prefect_yaml(tmp_path):
    assert documented_in(), f"no doc writes the scheduling steps {SCHEDULING} in this order"
    with running_server(tmp_path / "server", cli_env(tmp_path, temporary=True)) as (api, env):
        outputs = []
        for command in SCHEDULING:
            args = shlex.split(command)
            assert args[0] == "prefect"
            done = subprocess.run([PREFECT, *args[1:]], cwd=REPO, env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, f"{command}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
            outputs.append(done.stdout)
        deployments = httpx.post(f"{api}/deployments/filter", json={}, timeout=30).json()
        flows = {f["id"]: f["name"] for f in httpx.post(f"{api}/flows/filter", json={}, timeout=30).json()}

    found = {f"{flows[d['flow_id']]}/{d['name']}": d for d in deployments}
    assert set(found) == {"dialogbench/nightly", "dialogbench/adhoc", "dialogbench-work/gpu"}
    assert all(name in outputs[-1] for name in found)  # what `prefect deploy --all` said it created
    gpu, nightly, adhoc = found["dialogbench-work/gpu"], found["dialogbench/nightly"], found["dialogbench/adhoc"]
    assert gpu["entrypoint"] == "flows/work.py:work" and gpu["work_pool_name"] == "dialogbench-gpu"
    assert nightly["entrypoint"] == adhoc["entrypoint"] == "flows/pipeline.py:pipeline"
    assert nightly["work_pool_name"] == adhoc["work_pool_name"] == "dialogbench"
    assert [(s["schedule"]["cron"], s["schedule"]["timezone"], s["active"]) for s in nightly["schedules"]] == \
        [("0 1 * * *", "UTC", True)]
    assert nightly["parameters"]["config_path"] == "configs/nightly.yaml"
    assert adhoc["parameters"]["config_path"] == "configs/demo.yaml" and not adhoc["schedules"]
