"""Night over night on a real Prefect server (the e2e session's shared one: its REST API is all these tests read, so
a server of their own would only add its start): two runs with one model's config changed between them give the
right `changes` rows, artifact and report section, and judge every UniEval cell again by the agreement judge the
protocol lists, in the same runs; a judge whose answers change behind an unchanged config (an OpenAI-compatible
endpoint whose served model was swapped) is caught by the judge canary: the run ends Failed, exits 4 and the report
flags it.

The two nights (``two_nights``, a module fixture, ~15 s of CPU a run) serve both the changes test and the
agreement-judge test: neither writes to the lake, and an agreement judge's series are history's like the protocol
judge's (its slices are among the `changes` rows checked). The canary keeps its own pair of runs: its judge is an
endpoint the test swaps between them. Config names start with ``history-`` so that the tags (and artifact keys) the
tests look up on the shared server are this module's alone."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import yaml

from tests.e2e.conftest import REPO, cli_env
from tests.e2e.test_prefect_artifacts import artifacts, flow_runs, pipeline_run, post, run
from tests.e2e.prefect_server import free_port

pytestmark = pytest.mark.slow
BOTCHAT = {"n": [4], "limit": 4, "dataset": str(REPO / "data_lake/raw/botchat/mutual_test.jsonl"),
           "unieval_examples": str(REPO / "data_lake/raw/botchat/unieval_examples.json")}
NO_PROBES = {"probes": 0}  # scripted judges answer by rote: their known-answer probes are tests/judge_checks'
YES, NO = "Choice: Yes\nIndex: 3\nReason: the third utterance is a bot.", "Choice: No\nIndex: None\nReason: human."
JUDGES = ("judge", "judge-b")  # the protocol's judge, then its agreement judge
MODELS = ("bot-a", "bot-b")


def write(path: Path, data: dict) -> Path:
    path.write_text(yaml.safe_dump(data))
    return path


def query(lake: Path, sql: str, env: dict) -> list[dict]:
    out = lake.parent / "query.json"
    done = subprocess.run([sys.executable, "-m", "dialogbench.cli", "export", "--lake", str(lake), sql, "--out",
                           str(out)], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in out.read_text().splitlines()]


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> tuple[str, dict]:
    """The session's shared Prefect server: (its api url, the CLI's environment pointed at it)."""
    env = cli_env(tmp_path_factory.mktemp("history-cli"))
    return env["PREFECT_API_URL"], env


@dataclass(frozen=True)
class Nights:
    """Two runs of config ``history-night`` on ``lake``, bot-a's sampling changed between them (``first`` and
    ``second``: their `--json` summaries), with their server's ``api`` and the CLI's ``env``."""

    api: str
    env: dict
    lake: Path
    first: dict
    second: dict


@pytest.fixture(scope="module")
def two_nights(tmp_path_factory, server) -> Nights:
    """Night one, then night two with bot-a's config changed (its dialogues are new cells); both judge UniEval with
    the protocol's judge and an agreement judge (``botchat.agreement_judges``)."""
    api, env = server
    tmp_path = tmp_path_factory.mktemp("history-nights")
    lake = tmp_path / "lake"
    judges = [{"name": "judge", "backend": "scripted", "script": [YES, NO, NO]},
              {"name": "judge-b", "backend": "scripted", "script": [NO, YES]}]
    data = {"lake": str(lake), "judges": judges, "judge_checks": NO_PROBES,
            "botchat": {"judge": "judge", "agreement_judges": ["judge-b"], **BOTCHAT},
            "models": [{"name": "bot-a", "backend": "scripted", "script": ["Sure.", "Fine."]},
                       {"name": "bot-b", "backend": "scripted", "script": ["Okay.", "Why not?"]}]}
    done, first = run(write(tmp_path / "history-night.yaml", data), env, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    data["models"][0]["sampling"] = {"temperature": 0.7}  # bot-a's config changes: its dialogues are new cells
    done, second = run(write(tmp_path / "history-night.yaml", data), env, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    return Nights(api, env, lake, first, second)


def test_a_changed_model_config_is_the_cause_of_its_changes(two_nights):
    env, lake, first, second = two_nights.env, two_nights.lake, two_nights.first, two_nights.second
    series = len(MODELS) * len(JUDGES) * 2  # each model's pass rate at n=3 and n=4, by each judge
    assert second["history"]["rows"] == series and second["history"]["changes"] == sum(
        r["status"] != "same" for r in query(lake, "select status from changes", env))

    rows = query(lake, "select * from changes order by model, slice", env)
    assert {r["run_id"] for r in rows} == {second["run_id"]}
    assert {r["previous_run_id"] for r in rows} == {first["run_id"]}
    assert {(r["model"], r["slice"]) for r in rows} == {(m, f"judge={j}, n={n}") for m in MODELS for j in JUDGES
                                                         for n in (3, 4)}
    for r in rows:
        assert r["cause"] == ("model config" if r["model"] == "bot-a" else None), r
        assert (r["status"] == "same") == (abs(r["value"] - r["previous"]) < 1e-9)
        # an interval is the cluster bootstrap's, none when every seed scores the same: outside either, null with none
        outside = [None if low is None else not low <= v <= high for v, low, high in (
            (r["value"], r["previous_ci_low"], r["previous_ci_high"]), (r["previous"], r["ci_low"], r["ci_high"]))]
        assert r["outside_interval"] == (None if outside == [None, None] else any(outside)), r
    history = query(lake, "select * from metric_history where family = 'botchat'", env)
    assert {h["run_id"] for h in history} == {first["run_id"], second["run_id"]} and len(history) == 2 * len(rows)
    configs = query(lake, "select * from run_configs order by created_at", env)
    assert [c["run_id"] for c in configs] == [first["run_id"], second["run_id"]]
    assert "temperature: 0.7" in configs[1]["config"] and configs[0]["config_fp"] != configs[1]["config_fp"]

    found = artifacts(two_nights.api, flow_runs(two_nights.api, "config:history-night"))
    published = json.loads(found["dialogbench-history-night-changes"]["data"])
    moved = [r for r in rows if r["status"] != "same"]
    assert [(p["model"], p["slice"], p["cause"]) for p in published] == \
        [(m["model"], m["slice"], m["cause"]) for m in sorted(moved, key=lambda m: (
            m["status"] == "within noise", {True: 0, False: 1, None: 2}[m["outside_interval"]], m["status"] == "new",
            -abs(m["delta"] or 0), m["model"], m["slice"]))]
    report = Path(second["report"]["md"]).read_text()
    assert report.index("## Since the previous run") < report.index("## Leaderboard")
    assert f"Run {second['run_id']} against run {first['run_id']}: {series} metric series" in report


def test_an_agreement_judge_judges_the_same_cells_in_the_same_run(two_nights):
    """A protocol listing a second judge (``botchat.agreement_judges``), as a user runs it: each Prefect run judges
    every UniEval cell it plans twice (the first night all 8, the second bot-a's 4 new ones), the second judge's stage
    apart ("<stage>@<judge>": its own tasks and ``runs`` row), and judge_pairs lines the two judges' answers up; the
    leaderboard stays the protocol judge's."""
    env, lake, first, second = two_nights.env, two_nights.lake, two_nights.first, two_nights.second
    stages = query(lake, "select run_id, stage, planned, computed from runs order by stage", env)
    counts = {(r["run_id"], r["stage"]): (r["planned"], r["computed"]) for r in stages}
    for night, expected in ((first, (8, 8)), (second, (8, 4))):
        unieval = counts[night["run_id"], "botchat_unieval"]
        assert unieval == counts[night["run_id"], "botchat_unieval@judge-b"] == expected, night["run_id"]
    pairs = query(lake, "select judge_a, judge_b, category_a, category_b, agree from judge_pairs", env)
    assert len(pairs) == 8 and {(p["judge_a"], p["judge_b"]) for p in pairs} == {("judge", "judge-b")}
    for night in (first, second):
        assert {r["judge"] for r in night["leaderboard"]["botchat"]} == {"judge"}
    runs = flow_runs(two_nights.api, "config:history-night")
    tasks = post(two_nights.api, "task_runs/filter", {"flow_runs": {"id": {"any_": [r["id"] for r in runs]}}})
    assert any(t["name"].startswith("plan botchat_unieval@judge-b") for t in tasks)


def test_the_canary_fails_a_run_whose_judge_answers_changed(tmp_path, server):
    api, env = server
    reply, port = tmp_path / "reply.txt", free_port()
    reply.write_text(NO)
    endpoint = subprocess.Popen([sys.executable, "-m", "tests.fakes.openai_server", str(port), str(reply)], cwd=REPO)
    try:
        for _ in range(100):
            try:
                httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        env = {**env, "DIALOGBENCH_OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
               "DIALOGBENCH_OPENAI_API_KEY": "test-key"}
        config = write(tmp_path / "history-canary.yaml", {
            "lake": str(tmp_path / "lake"), "botchat": {"judge": "judge", **BOTCHAT},
            "models": [{"name": "bot-a", "backend": "scripted", "script": ["Sure.", "Fine."]}],
            "judges": [{"name": "judge", "backend": "openai", "weights": "served-judge", "max_retries": 0}],
            "canary": {"size": 3, "min_agreement": 0.9, "every": "run"}, "judge_checks": NO_PROBES})
        done, first = run(config, env, tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
        canary = next(s for s in first["stages"] if s["stage"] == "judge_canary")
        assert (canary["planned"], canary["computed"], canary["cached"]) == (3, 3, 0)

        reply.write_text(YES)  # the endpoint now serves a judge that answers otherwise; the config is the same
        done, second = run(config, env, tmp_path)
        assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-3000:]
        unieval = next(s for s in second["stages"] if s["stage"] == "botchat_unieval")
        assert (unieval["cached"], unieval["computed"]) == (4, 0)  # the verdicts themselves are cached
        assert "judge canary: judge on botchat_unieval gave the first night's answer in 0 of 3" in second["failed"]
        assert "judge canary" in done.stderr

        runs = flow_runs(api, "config:history-canary")
        assert pipeline_run(runs, first["run_id"])["state_type"] == "COMPLETED"
        flow = pipeline_run(runs, second["run_id"])
        assert flow["state_type"] == "FAILED" and "judge canary" in flow["state"]["message"]
        agreement = query(tmp_path / "lake", "select * from canary_agreement order by created_at", env)
        assert [(a["run_id"], a["agree"], a["judgments"], a["flagged"]) for a in agreement] == \
            [(first["run_id"], 3, 3, False), (second["run_id"], 0, 3, True)]
        repeated = query(tmp_path / "lake", "select * from canary_judgments order by run_id, original_key", env)
        assert [r["original_key"] for r in repeated[:3]] == [r["original_key"] for r in repeated[3:]]  # a fixed set
        report = Path(second["report"]["md"]).read_text()
        assert "## Judge canary" in report and "judge on botchat\\_unieval: 0.0% of the canary judgments" in report
    finally:
        endpoint.kill()
