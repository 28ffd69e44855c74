"""What a run leaves in the Prefect UI, read back from a real Prefect server through its REST API: the stage
table (the same counts as `--json`), a leaderboard table per enabled family, the report (a file:// link and
report.md's text), the failures table, a progress artifact per computing stage, and the run's tags (on the flow
run, its family subflow and its task runs). A run whose cells fail ends Failed (API state) and exits 4 with its
summary still printed and written; with `fail_on: {cells: share, share: …}` above the failed share the same run
is Completed and exits 0.

The runs report to the e2e session's shared Prefect server (``server``): the tests read only its REST API (through
these helpers, which test_prefect_history.py imports too), so a server of this module's own would only add its start
to the suite's CPU time. Config names start with ``artifacts-`` so that the tags and artifact keys looked
up there are this module's alone. Each test keeps its own runs: a clean run's empty failures table, a failing run's
exit 4 and a tolerated failing run's exit 0 cannot come from one run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import yaml

from tests.e2e.conftest import REPO, cli_env

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> tuple[str, dict]:
    """The e2e session's shared Prefect server: (its api url, the CLI's environment pointed at it)."""
    env = cli_env(tmp_path_factory.mktemp("artifacts-cli"))
    return env["PREFECT_API_URL"], env


def config_file(tmp_path: Path, name: str, *, judge_script: list[str], mtbench101: bool = False,
                fail_on: dict | None = None, report: dict | None = None) -> Path:
    data = {
        "lake": str(tmp_path / f"lake-{name}"),
        "models": [{"name": "bot-a", "backend": "scripted", "script": ["Sure, see you then.", "Sounds good to me."]},
                   {"name": "bot-b", "backend": "scripted", "script": ["Okay.", "Why not?"]}],
        "judges": [{"name": "judge", "backend": "scripted", "script": judge_script}],
        "botchat": {"judge": "judge", "n": [4], "limit": 4, "judge_chunk_size": 3,  # UniEval: 8 cells, 3 chunks
                    "dataset": str(REPO / "data_lake/raw/botchat/mutual_test.jsonl"),
                    "unieval_examples": str(REPO / "data_lake/raw/botchat/unieval_examples.json")},
        # one scripted judge answers every protocol, so each protocol reads some of the others' replies as unreadable
        "judge_checks": {"max_unparsed": 0.7, "probes": 0},
    }
    if mtbench101:
        data["mtbench101"] = {"limit": 1, "tasks": ["CM"],
                              "dataset": str(REPO / "data_lake/raw/mtbench101/mtbench101.jsonl")}
    if fail_on:
        data["fail_on"] = fail_on
    if report:
        data["report"] = report
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def run(config: Path, env: dict, tmp_path: Path) -> tuple[subprocess.CompletedProcess, dict]:
    summary = tmp_path / f"{config.stem}.json"
    done = subprocess.run([sys.executable, "-m", "dialogbench.cli", "run", "--config", str(config), "--json",
                           str(summary)], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert summary.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    return done, json.loads(summary.read_text())


def post(api: str, path: str, body: dict) -> list[dict]:
    response = httpx.post(f"{api}/{path}", json=body, timeout=30)
    response.raise_for_status()
    return response.json()


def flow_runs(api: str, tag: str) -> list[dict]:
    """The pipeline's flow run and its family subflows: every flow run carrying the run's config tag."""
    return post(api, "flow_runs/filter", {"flow_runs": {"tags": {"all_": [tag]}}})


def artifacts(api: str, runs: list[dict]) -> dict[str, dict]:
    """The latest artifact per key among these flow runs'."""
    found = post(api, "artifacts/filter", {"artifacts": {"flow_run_id": {"any_": [r["id"] for r in runs]}},
                                           "sort": "CREATED_DESC"})
    latest: dict[str, dict] = {}
    for artifact in found:
        latest.setdefault(artifact["key"], artifact)
    return latest


def pipeline_run(runs: list[dict], run_id: str) -> dict:
    [run] = [r for r in runs if r["name"] == run_id]
    return run


def test_a_run_publishes_its_results_and_is_tagged(tmp_path, server):
    api, env = server
    board = "artifacts-published"
    key = f"dialogbench-{board}-"  # every artifact key names the run's board
    config = config_file(tmp_path, board, mtbench101=True,
                         judge_script=["Choice: Yes\nIndex: 4\nReason: repetitive",
                                       "Choice: No\nIndex: None\nReason: fine", "Rating: [[7]]"])
    done, summary = run(config, env, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert summary["failed"] is None and summary["artifacts"]["artifacts"] >= 6

    runs = flow_runs(api, f"config:{board}")
    flow = pipeline_run(runs, summary["run_id"])
    assert flow["state_type"] == "COMPLETED"
    expected_tags = {f"config:{board}", f"board:{board}", "family:botchat", "family:mtbench101", "model:bot-a",
                     "model:bot-b", "model:judge"}
    assert expected_tags <= set(flow["tags"]) and set(summary["tags"]) == expected_tags
    assert {r["name"] for r in runs} >= {summary["run_id"], "botchat", "mtbench101"}  # the subflows are tagged
    subflows = {r["name"]: set(r["tags"]) for r in runs if r["name"] != summary["run_id"]}
    for family, other in (("botchat", "mtbench101"), ("mtbench101", "botchat")):  # each its own family only
        assert f"family:{family}" in subflows[family] and f"family:{other}" not in subflows[family]
        assert {f"config:{board}", f"board:{board}"} <= subflows[family]
    tasks = post(api, "task_runs/filter", {"flow_runs": {"id": {"any_": [r["id"] for r in runs]}}})
    families = {"botchat": {"family:botchat"}, "mtbench101": {"family:mtbench101"}}
    for task in tasks:
        if task["name"].startswith(("plan ", "record ")):
            family = "mtbench101" if "mtbench101" in task["name"] else "botchat"
            assert families[family] <= set(task["tags"]) and f"config:{board}" in task["tags"], task["tags"]

    found = artifacts(api, runs)
    # every key names the run's board (config artifacts-published.yaml: board "artifacts-published"), its progress
    # artifacts too (made in the family subflows): another board's run publishes beside these, not over them
    assert found and all(k.startswith(key) for k in found), sorted(found)
    judges = {(r["judge"], r["protocol"]): r for r in json.loads(found[key + "judges"]["data"])}
    assert set(judges) == {("judge", "botchat_unieval"), ("judge", "mtbench101_judge")} and all(
        "measured" in r for r in judges.values())
    stages = json.loads(found[key + "stages"]["data"])
    assert [{k: s[k] for k in ("stage", "planned", "cached", "computed", "failed")} for s in stages] == \
        [{k: s[k] for k in ("stage", "planned", "cached", "computed", "failed")} for s in summary["stages"]]
    assert found[key + "stages"]["flow_run_id"] == flow["id"]

    for family in ("botchat", "mtbench101"):
        rows = json.loads(found[key + f"leaderboard-{family}"]["data"])
        assert [r["model"] for r in rows] == [r["model"] for r in summary["leaderboard"][family]]
        assert {r["model"] for r in rows} == {"bot-a", "bot-b"}
    botchat = {r["model"]: r for r in json.loads(found[key + "leaderboard-botchat"]["data"])}
    assert all(botchat[r["model"]]["pass@4"] == r["pass@4"] for r in summary["leaderboard"]["botchat"])
    # the leaderboards are read after the run's snapshot: a measured number carries the ranks its interval allows
    assert all(r["pass@4_ranks"] in ("1", "2", "1-2") for r in botchat.values() if r["pass@4"] is not None)
    assert all("avg_ci_low" in r and "avg_ranks" in r
               for r in json.loads(found[key + "leaderboard-mtbench101"]["data"]))

    # no report.url: the report artifact says where the file is and how to serve it (a file:// link opens nowhere)
    note = found[key + "report"]
    assert summary["report"]["html"] in note["data"] and "](" not in note["data"]
    assert "dialogbench serve" in note["data"] and "report.url" in note["data"]
    assert found[key + "report-md"]["data"] == Path(summary["report"]["md"]).read_text()
    assert json.loads(found[key + "failures"]["data"]) == []

    # a progress artifact for the stage computed in several chunks, finished at 100%; none for one-chunk stages
    progress = {k: a for k, a in found.items() if k.startswith(key + "progress-")}
    assert key + "progress-botchat-unieval" in progress
    assert all(a["type"] == "progress" and a["data"] == 100.0 for a in progress.values()), progress
    assert key + "progress-generate-bot-a" not in progress
    assert key + "progress-botchat-elo" not in progress


def test_failed_cells_fail_the_run_unless_their_share_is_tolerated(tmp_path, server):
    api, env = server
    # the judge's replies in turn: one in four is a backend error (its text quotes a key-shaped token)
    script = ["Choice: Yes\nIndex: 4\nReason: repetitive", "!error:HTTP 503 overloaded sk-" + "x" * 30,
              "Choice: No\nIndex: None\nReason: fine", "Choice: No\nIndex: None\nReason: fine"]
    failing = config_file(tmp_path, "artifacts-failing", judge_script=script, report={"url": "http://gpu-box:8765/"})
    done, summary = run(failing, env, tmp_path)
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-3000:]
    unieval = next(s for s in summary["stages"] if s["stage"] == "botchat_unieval")
    assert (unieval["computed"], unieval["failed"]) == (6, 2)  # 4 seeds x 2 models, every fourth verdict fails
    assert "computed      6  failed    2" in done.stdout  # the stage table is printed
    assert "botchat_unieval: 2 of 8 failed" in summary["failed"] and "failed:" in done.stderr
    assert "UniEval pass@N" in done.stdout and Path(summary["report"]["html"]).exists()

    runs = flow_runs(api, "config:artifacts-failing")
    flow = pipeline_run(runs, summary["run_id"])
    assert flow["state_type"] == "FAILED"
    assert "botchat_unieval: 2 of 8 failed" in flow["state"]["message"]
    link = f"http://gpu-box:8765/runs/{summary['run_id']}/report.html"
    assert flow["state"]["message"].endswith(f"Report: {link}")  # what a notification quotes
    # the parent flow run says why, as a WARNING of its own (not only its subflows' and tasks')
    logs = post(api, "logs/filter", {"logs": {"flow_run_id": {"any_": [flow["id"]]}, "level": {"ge_": 30}}})
    assert any("botchat_unieval: 2 of 8 failed" in entry["message"] and entry["task_run_id"] is None
               for entry in logs), [entry["message"] for entry in logs]
    found = artifacts(api, runs)
    key = "dialogbench-artifacts-failing-"
    assert all(k.startswith(key) for k in found), sorted(found)
    assert f"]({link})" in found[key + "report"]["data"]  # Prefect stores a link artifact as [text](url)
    assert f"]({link.replace('report.html', 'explorer.html')})" in found[key + "explorer"]["data"]
    failures = json.loads(found[key + "failures"]["data"])
    assert len(failures) == 2 and {f["stage"] for f in failures} == {"botchat_unieval"}
    assert {f["model"] for f in failures} <= {"bot-a", "bot-b"} and all(f["judge"] == "judge" for f in failures)
    assert all(f["error"] == "HTTP 503 overloaded [REDACTED]" for f in failures), failures
    assert sum(s["failed"] for s in json.loads(found[key + "stages"]["data"])) == 2

    tolerant = config_file(tmp_path, "artifacts-tolerant", judge_script=script,
                           fail_on={"cells": "share", "share": 0.3})
    done, summary = run(tolerant, env, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert summary["failed"] is None and sum(s["failed"] for s in summary["stages"]) == 2  # 25% tried, under 30%
    runs = flow_runs(api, "config:artifacts-tolerant")
    assert pipeline_run(runs, summary["run_id"])["state_type"] == "COMPLETED"
    assert len(json.loads(artifacts(api, runs)["dialogbench-artifacts-tolerant-failures"]["data"])) == 2
