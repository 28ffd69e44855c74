"""Numbers a nightly user can trust, through the CLI and the Prefect flow as a user runs them: a judge that cannot be
read is a finding (not measured, the run fails), a model whose endpoint never answers is missing (never a weak
model; failures counted once; filled by the next run once it answers), an ad-hoc run publishes to its own board and
moves none of the nightly numbers, and every run records what ran it.

Each `dialogbench run` costs ~15 s of CPU, so runs are shared where the checks allow: the night whose model's
endpoint never answered (``dead_night``, a failed run with ``report.url`` set) serves both the report-links test (it
only reads what that run printed and its own run folder) and the missing-then-filled test, which then runs the next
night on the same lake (that second run leaves the first run's output and folder as they were). The unreadable judge
and the ad-hoc board keep runs of their own: one needs a judge that no other check can live with, the other a
lake whose nightly board only it moves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.e2e.conftest import REPO, cli_env
from tests.e2e.prefect_server import free_port

pytestmark = pytest.mark.slow
BOTCHAT = {"judge": "judge", "n": [4], "limit": 4, "dataset": str(REPO / "data_lake/raw/botchat/mutual_test.jsonl"),
           "unieval_examples": str(REPO / "data_lake/raw/botchat/unieval_examples.json")}
NO, YES = "Choice: No\nIndex: None\nReason: human.", "Choice: Yes\nIndex: 3\nReason: a bot."
NO_PROBES = {"probes": 0}  # scripted judges answer by rote: their known-answer probes are tests/judge_checks'


def cli(args: list[str], tmp_path: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dialogbench.cli", *args], cwd=REPO, env=env or cli_env(tmp_path),
                          capture_output=True, text=True, timeout=600)


def run(config: Path, tmp_path: Path, *flags: str, env: dict | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    summary = tmp_path / f"summary-{time.monotonic_ns()}.json"
    done = cli(["run", "--config", str(config), "--json", str(summary), *flags], tmp_path, env)
    return done, json.loads(summary.read_text()) if summary.exists() else {}


def query(lake: Path, sql: str, tmp_path: Path, *flags: str) -> list[dict]:
    out = tmp_path / f"q-{time.monotonic_ns()}.json"
    done = cli(["export", "--lake", str(lake), sql, "--out", str(out), *flags], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in out.read_text().splitlines()]


def write(path: Path, data: dict) -> Path:
    path.write_text(yaml.safe_dump(data))
    return path


def test_an_unreadable_judge_is_a_finding_never_a_score(tmp_path):
    lake = tmp_path / "lake"
    config = write(tmp_path / "night.yaml", {
        "lake": str(lake), "botchat": BOTCHAT,
        "models": [{"name": "bot-a", "backend": "scripted", "script": ["Sure."]},
                   {"name": "bot-b", "backend": "scripted", "script": ["Okay."]}],
        "judges": [{"name": "judge", "backend": "scripted", "script": ["I cannot say.", "I cannot say.", NO]}]})
    done, summary = run(config, tmp_path)
    assert done.returncode == 4, done.stderr[-3000:]
    assert "judge checks: judge on botchat_unieval: 6 of 8 verdicts (75%) could not be read" in done.stderr
    assert "judge checks" in summary["failed"] and "Traceback" not in done.stderr
    report = Path(summary["report"]["html"]).read_text()
    assert "not measured" in report and "could not be read" in report
    board = {r["model"]: r for r in summary["leaderboard"]["botchat"]}
    assert {r["pass@4"] for r in board.values()} == {None}  # the authors' rule would say 100% for both
    assert "not measured" in done.stdout
    # what ran it, recorded with every stage of the run
    runs = query(lake, "select distinct commit, host, versions['prefect'] as prefect, board from runs", tmp_path)
    assert len(runs) == 1 and runs[0]["commit"] and runs[0]["host"] and runs[0]["prefect"] == "3.7.7"
    assert runs[0]["board"] == "night"


@dataclass(frozen=True)
class DeadNight:
    """A first night whose model ``bot-dead`` never answered: its config, CLI environment (``DEAD_URL`` names
    ``port``, where nothing listens yet), lake and folder, and the run's outcome (``done``, ``summary``)."""

    tmp: Path
    lake: Path
    config: Path
    env: dict
    port: int
    done: subprocess.CompletedProcess
    summary: dict


@pytest.fixture(scope="module")
def dead_night(tmp_path_factory) -> DeadNight:
    """One night with a model whose endpoint refuses every connection, run once for this module's two tests that read
    it (the report's links; the missing cells, which that test then fills with a second night on the same lake)."""
    tmp_path = tmp_path_factory.mktemp("dead-night")
    port, lake = free_port(), tmp_path / "lake"  # nothing listens there yet: connection refused
    dead = {"name": "bot-dead", "backend": "openai", "weights": "served-model", "base_url_env": "DEAD_URL",
            "api_key_env": "DEAD_KEY", "max_retries": 1, "timeout_s": 5}
    config = write(tmp_path / "night.yaml", {
        "lake": str(lake), "report": {"url": "http://gpu-box:8765"},
        "models": [{"name": "bot-live", "backend": "scripted", "script": ["Is it a fruit?", "gameover"]}, dead],
        "judges": [{"name": "judge", "backend": "scripted", "script": ["Rating: [[6]]"]}], "judge_checks": NO_PROBES,
        "mtbench101": {"judge": "judge", "tasks": ["CM"], "limit": 1},
        "gameeval": {"max_retries": 1, "askguess": {"limit": 2, "max_rounds": 1,
                                                    "settings": ["without_description"]},
                     "spyfall": {"enabled": False}, "tofukingdom": {"enabled": False}}})
    env = {**cli_env(tmp_path), "DEAD_URL": f"http://127.0.0.1:{port}/v1", "DEAD_KEY": "sk-test"}
    done, summary = run(config, tmp_path, env=env)
    return DeadNight(tmp_path, lake, config, env, port, done, summary)


def test_report_links_follow_report_url(dead_night):
    """With report.url, the failure message (what a notification quotes) links the run's report where
    `dialogbench serve` serves it."""
    done, summary, lake = dead_night.done, dead_night.summary, dead_night.lake
    assert done.returncode == 4, done.stderr[-3000:]
    assert f"served report: http://gpu-box:8765/runs/{summary['run_id']}/report.html" in done.stderr
    note = json.loads((lake / "reports" / "runs" / summary["run_id"] / "run.json").read_text())
    assert note["board"] == "night" and " cell(s) failed in " in note["failed"]
    assert os.path.isfile(summary["report"]["html"])


def test_a_model_that_never_answered_is_missing_then_filled(dead_night):
    tmp_path, lake, config, env = dead_night.tmp, dead_night.lake, dead_night.config, dead_night.env
    reply = tmp_path / "reply.txt"
    reply.write_text("Is it a kind of animal? gameover")
    done, summary = dead_night.done, dead_night.summary
    assert done.returncode == 4, done.stderr[-3000:]
    stages = {s["stage"]: s for s in summary["stages"]}
    # the dead model's games and answers failed: no outcome, no score, no "unparsed" rating
    assert stages["gameeval_askguess"]["failed"] == 2 and stages["gameeval_askguess"]["computed"] == 2
    askguess = {r["model"]: r for r in query(lake, "select * from gameeval_askguess", tmp_path)}
    assert (askguess["bot-dead"]["trials"], askguess["bot-dead"]["ce"], askguess["bot-dead"]["missing"]) == (0, None, 2)
    assert askguess["bot-live"]["trials"] == 2
    answers = stages["mtbench101_answer:bot-dead"]
    judged = stages["mtbench101_judge"]
    assert answers["failed"] == answers["planned"] > 0
    assert judged["blocked"] == answers["planned"] and judged["cached"] == 0  # blocked, never "cached"
    tasks = {r["model"]: r for r in query(lake, "select * from mtbench101_tasks", tmp_path)}
    assert (tasks["bot-dead"]["score"], tasks["bot-dead"]["unparsed"], tasks["bot-dead"]["missing"]) == (None, 0, 1)
    # the stages, the failures view and the run's message count the same cells
    failed_cells = sum(s["failed"] for s in summary["stages"])
    assert len(query(lake, "select distinct cell_key from failures", tmp_path)) == failed_cells
    assert f"{failed_cells} cell(s) failed" in summary["failed"]
    changes = query(lake, "select model, status, note from changes where model = 'bot-dead'", tmp_path)
    assert changes and {c["status"] for c in changes} == {"incomplete"} and all("missing" in c["note"] for c in changes)

    from tests.fakes.openai_server import serve  # the endpoint answers now: the next run fills the cells
    server = serve(dead_night.port, reply)
    import threading
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        done, summary = run(config, tmp_path, env=env)
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr[-3000:]
    stages = {s["stage"]: s for s in summary["stages"]}
    assert stages["gameeval_askguess"]["computed"] == 2 and stages["gameeval_askguess"]["failed"] == 0
    judged = stages["mtbench101_judge"]
    assert judged["blocked"] == 0 and judged["computed"] == answers["planned"]
    askguess = {r["model"]: r for r in query(lake, "select * from gameeval_askguess", tmp_path)}
    assert askguess["bot-dead"]["trials"] == 2 and askguess["bot-dead"]["missing"] == 0
    tasks = {r["model"]: r for r in query(lake, "select * from mtbench101_tasks", tmp_path)}
    assert tasks["bot-dead"]["score"] == 6 and tasks["bot-dead"]["missing"] == 0


def test_an_adhoc_run_moves_no_nightly_number(tmp_path):
    lake = tmp_path / "lake"
    judge = {"name": "judge", "backend": "scripted", "script": [YES, NO, NO]}
    config = write(tmp_path / "night.yaml", {
        "lake": str(lake), "judges": [judge], "botchat": BOTCHAT, "judge_checks": NO_PROBES,
        "models": [{"name": "bot-a", "backend": "scripted", "script": ["Sure.", "Fine."]},
                   {"name": "bot-b", "backend": "scripted", "script": ["Okay.", "Why not?"]}]})
    done, first = run(config, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    nightly = query(lake, "select * from botchat_unieval order by model, n", tmp_path)
    top = (lake / "reports" / "report.html").read_text()

    done, adhoc = run(config, tmp_path, "--limit", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    assert adhoc["board"] == "night+limit=2"
    # the nightly board's leaderboard, changes and latest report are the first run's
    assert query(lake, "select * from botchat_unieval order by model, n", tmp_path) == nightly
    assert query(lake, "select * from botchat_unieval order by model, n", tmp_path, "--board", "night") == nightly
    assert {r["dialogues"] for r in query(lake, "select * from botchat_unieval", tmp_path, "--board",
                                          "night+limit=2")} == {2}
    assert {r["run_id"] for r in query(lake, "select run_id from changes", tmp_path)} == {first["run_id"]}
    assert (lake / "reports" / "report.html").read_text() == top
    assert (lake / "reports" / "boards" / "night+limit=2" / "report.html").is_file()
    assert (lake / "reports" / "runs" / adhoc["run_id"] / "report.html").is_file()
    boards = {r["board"]: r for r in query(lake, "select * from boards", tmp_path)}
    assert boards["night"]["is_default"] and boards["night+limit=2"]["adhoc"]

    done, second = run(config, tmp_path)  # the next nightly run compares with the previous nightly run
    assert done.returncode == 0, done.stderr[-3000:]
    changes = query(lake, "select previous_run_id, status, cause from changes", tmp_path)
    assert {c["previous_run_id"] for c in changes} == {first["run_id"]}
    assert {c["status"] for c in changes} == {"same"} and {c["cause"] for c in changes} == {None}
