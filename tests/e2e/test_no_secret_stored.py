"""No secret is stored: real `dialogbench run`s, then everything they left is searched.

- An API key: a local OpenAI-compatible endpoint answers 401 quoting the key it was sent (as vLLM's server does);
  the run uses Prefect's temporary local server, and its judge's config holds the secrets below too.
- Secrets written in the config itself, in fields Prefect and the lake would otherwise keep word for word (an
  engine dict's ``hf_token`` and ``auth``, an ``Authorization: Basic`` header, a password in the ``weights`` URL,
  a token in ``revision``): the run uses a real Prefect server, whose REST API (what the UI shows) and every
  table of whose database are searched, with the lake, stdout/stderr and the ``--json`` summary."""

from __future__ import annotations

import base64
import json
import sqlite3
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pyarrow.parquet as pq
import pytest
import yaml

from tests.e2e.conftest import REPO, cli_env, run_cli
from tests.e2e.prefect_server import running_server

pytestmark = pytest.mark.slow

SHAPED_KEY = "sk-test-PLANTED1234567890abcdefXYZ"   # caught by its shape and by its value
PLAIN_KEY = "PLANTEDplainvalue0042"                   # no known shape: caught only as a configured value

# Secrets written in a config, each where a user might put one. The scripted backend ignores engine, weights and
# revision, so the run works while every one of them travels through the config.
HF_TOKEN = "hf_" + "PLANTEDhfEngineToken0123456789"          # engine.hf_token: a key naming a secret, and shaped
ENGINE_PASSWORD = "PLANTEDenginePw0042"                       # engine.auth.password: no shape, only its key says
URL_PASSWORD = "PLANTEDurlPw0042"                             # weights: https://alice:<password>@host/…
REVISION_TOKEN = "ghp_" + "PLANTEDrevisionToken" + "0" * 16    # revision: a GitHub token pasted by mistake
BASIC_PASSWORD = "PLANTEDbasicPw0042"                         # engine.headers: Authorization: Basic base64(user:pw)
BASIC = base64.b64encode(f"alice:{BASIC_PASSWORD}".encode()).decode()
CONFIG_SECRETS = (HF_TOKEN, ENGINE_PASSWORD, URL_PASSWORD, REVISION_TOKEN, BASIC_PASSWORD, BASIC)
WEIGHTS = f"https://alice:{URL_PASSWORD}@weights.example.com/org/model.gguf"
ENGINE = {"hf_token": HF_TOKEN, "auth": {"user": "alice", "password": ENGINE_PASSWORD},
          "headers": [f"Authorization: Basic {BASIC}"]}


class _Refuses(BaseHTTPRequestHandler):
    """/v1/chat/completions → 401 with the received key in the body, word for word."""

    hits: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        got = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
        type(self).hits.append(self.path)
        body = json.dumps({"error": {"message": f"Incorrect API key provided: got '{got}', expected "
                                                "'sk-the-right-one...'", "type": "invalid_request_error",
                                     "code": "invalid_api_key"}}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def endpoint():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refuses)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Refuses.hits = []
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _texts(root: Path):
    """(path, text) of every file under ``root``: Parquet files by their rows (their bytes are
    compressed), every file by its raw bytes too."""
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if path.suffix == ".parquet":
            yield path, json.dumps(pq.read_table(path).to_pylist(), default=str)
        yield path, path.read_bytes().decode("utf-8", errors="replace")


def test_a_401_quoting_the_key_leaves_no_key_anywhere(tmp_path, endpoint, monkeypatch):
    monkeypatch.setenv("DB_TEST_BASE_URL", endpoint)
    monkeypatch.setenv("DB_TEST_KEY_A", SHAPED_KEY)
    monkeypatch.setenv("DB_TEST_KEY_B", PLAIN_KEY)
    remote = {"backend": "openai", "weights": "remote-model", "base_url_env": "DB_TEST_BASE_URL", "max_retries": 0,
              "structured_outputs": "off"}
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({
        "lake": str(tmp_path / "lake"),
        "models": [{"name": "remote-a", "api_key_env": "DB_TEST_KEY_A", **remote},
                   {"name": "remote-b", "api_key_env": "DB_TEST_KEY_B", **remote}],
        # the judge's config holds secrets too: this run's Prefect is the temporary local server
        "judges": [{"name": "judge", "backend": "scripted", "script": ["Choice: No\nIndex: None\nReason: fine"],
                    "weights": WEIGHTS, "revision": REVISION_TOKEN, "engine": ENGINE}],
        "botchat": {"judge": "judge", "n": [4], "limit": 1,
                    "dataset": str(REPO / "data_lake/raw/botchat/mutual_test.jsonl"),
                    "unieval_examples": str(REPO / "data_lake/raw/botchat/unieval_examples.json")},
    }))
    summary = tmp_path / "summary.json"
    result = run_cli(["run", "--config", str(config), "--json", str(summary)], tmp_path, temporary=True)
    assert result.returncode == 4, result.stderr[-3000:]  # every generation failed: the run is Failed (fail_on)

    # The endpoint was asked and refused; the failure is stored (redacted) and logged (redacted).
    assert len(_Refuses.hits) == 2 and all(h.endswith("/chat/completions") for h in _Refuses.hits)
    failures = [json.loads(text) for path, text in _texts(tmp_path / "lake")
                if "failures" in path.parts and path.suffix == ".parquet" and text.startswith("[")]
    errors = [row["error"] for rows in failures for row in rows]
    assert len(errors) == 2 and all("HTTP 401" in e and "[REDACTED]" in e for e in errors), errors
    prefect_texts = "".join(text for _, text in _texts(tmp_path / "prefect"))
    assert "[REDACTED]" in prefect_texts  # the failure's log line (and its failures artifact) reached Prefect's db

    database = _database_text(tmp_path / "prefect" / "prefect.db")
    assert "hf_token" in database  # the family subflow's parameters, with the config, are in it
    searched = [("stdout", result.stdout), ("stderr", result.stderr), ("prefect database", database),
                *((path, text) for path, text in _texts(tmp_path) if path != config)]
    assert any(path == summary for path, _ in searched)
    assert any(str(path).endswith(".db") for path, _ in searched)  # Prefect's sqlite (logs, parameters)
    for key in (SHAPED_KEY, PLAIN_KEY, *CONFIG_SECRETS):
        leaks = [str(where) for where, text in searched if key in text]
        assert not leaks, f"{key} stored in {leaks}"




@pytest.fixture
def prefect_server(tmp_path):
    """A real Prefect server with its own PREFECT_HOME; yields (api url, its database, env for the CLI)."""
    home = tmp_path / "prefect-server"
    with running_server(home, cli_env(home, temporary=True)) as (api, env):
        yield api, Path(env["PREFECT_HOME"]) / "prefect.db", env


def _database_text(db: Path) -> str:
    """Every row of every table of Prefect's database as text (a long JSON value spans SQLite's overflow pages, so
    the file's raw bytes alone could hide a secret cut in two)."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        tables = [name for (name,) in con.execute("select name from sqlite_master where type = 'table'")]
        return "\n".join(f"{table}: {row!r}" for table in tables for row in con.execute(f'select * from "{table}"'))


def _events_settled(db: Path, timeout: float = 60) -> None:
    """Wait until the server has stored the events the run sent (its persister writes them in batches)."""
    deadline, last, stable_since = time.monotonic() + timeout, -1, time.monotonic()
    while time.monotonic() < deadline:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
            count = con.execute("select count(*) from events").fetchone()[0]
        if count != last:
            last, stable_since = count, time.monotonic()
        elif count and time.monotonic() - stable_since > 6:
            return
        time.sleep(1)


def _api(api: str, method: str, path: str, body: dict | None = None):
    response = httpx.request(method, f"{api}/{path}", json=body, timeout=30)
    response.raise_for_status()
    return response.json()


def test_secrets_written_in_the_config_reach_neither_prefect_nor_the_lake(tmp_path, prefect_server):
    api, db, env = prefect_server
    lake = tmp_path / "lake"
    config = tmp_path / "secrets.yaml"  # the user's own file holds them, of course: it is not searched
    config.write_text(yaml.safe_dump({
        "lake": str(lake),
        "models": [
            {"name": "bot-a", "backend": "scripted", "script": ["Sure, see you then.", "Sounds good to me."],
             "weights": WEIGHTS, "revision": REVISION_TOKEN, "engine": ENGINE},
            {"name": "bot-b", "backend": "scripted", "script": ["Okay.", "Why not?"]}],
        # one verdict in three is a backend error quoting two of the secrets, neither in a shape redact() knows
        "judges": [{"name": "judge", "backend": "scripted",
                    "script": ["Choice: No\nIndex: None\nReason: fine", "Choice: Yes\nIndex: 4\nReason: repetitive",
                               f"!error:HTTP 403: credentials {URL_PASSWORD} / {ENGINE_PASSWORD} refused"]}],
        "botchat": {"judge": "judge", "n": [4], "limit": 3,
                    "dataset": str(REPO / "data_lake/raw/botchat/mutual_test.jsonl"),
                    "unieval_examples": str(REPO / "data_lake/raw/botchat/unieval_examples.json")},
        "fail_on": {"cells": "never"},  # the run works: its failed verdicts are recorded, redacted
        "judge_checks": {"max_unparsed": 0.7, "probes": 0},  # a scripted judge cannot tell: not what is tested
    }))
    summary = tmp_path / "summary.json"
    result = subprocess.run([sys.executable, "-m", "dialogbench.cli", "run", "--config", str(config), "--json",
                             str(summary)], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    done = json.loads(summary.read_text())
    stages = {s["stage"]: s for s in done["stages"]}
    assert stages["generate:bot-a"]["computed"] == 3 and stages["botchat_unieval"]["failed"] == 2, stages

    # The run says which fields hold a secret, never the value.
    for field in ("models[0].weights", "models[0].revision", "models[0].engine.hf_token", "models[0].engine.auth",
                  "models[0].engine.headers[0]"):
        assert f"{field}: looks like a secret written in the config" in result.stderr, field

    # Prefect keeps a redacted copy of the config: the family subflow's run parameter (GET /api/flow_runs/{id}).
    runs = _api(api, "POST", "flow_runs/filter", {"flow_runs": {"tags": {"all_": ["config:secrets"]}}})
    assert {r["name"] for r in runs} == {done["run_id"], "botchat"}
    flow_runs = {r["name"]: _api(api, "GET", f"flow_runs/{r['id']}") for r in runs}
    shown = flow_runs["botchat"]["parameters"]["run"]["config"]["models"][0]  # the run, recorded as its config
    assert shown["name"] == "bot-a" and shown["script"] == ["Sure, see you then.", "Sounds good to me."]
    assert shown["weights"] == "https://alice:[REDACTED]@weights.example.com/org/model.gguf"
    assert shown["revision"] == "[REDACTED]"
    assert shown["engine"] == {"hf_token": "[REDACTED]", "auth": {"user": "[REDACTED]", "password": "[REDACTED]"},
                               "headers": ["Authorization: Basic [REDACTED]"]}
    assert flow_runs[done["run_id"]]["parameters"]["config_path"] == str(config)

    # So does the lake: run_configs holds the same redacted copy; the failed verdicts' errors are redacted.
    [recorded] = [row for path, text in _texts(lake) if "run_configs" in path.parts and path.suffix == ".parquet"
                  and text.startswith("[") for row in json.loads(text)]
    assert yaml.safe_load(recorded["config"])["models"][0] == shown
    errors = [row["error"] for path, text in _texts(lake) if "failures" in path.parts and path.suffix == ".parquet"
              and text.startswith("[") for row in json.loads(text)]
    assert len(errors) == 2 and all("[REDACTED]" in e and "HTTP 403" in e for e in errors), errors

    ids = [r["id"] for r in runs]
    api_texts = [
        ("GET flow_runs", json.dumps(flow_runs)),
        ("task_runs", json.dumps(_api(api, "POST", "task_runs/filter", {"flow_runs": {"id": {"any_": ids}}}))),
        ("logs", json.dumps(_api(api, "POST", "logs/filter", {"logs": {"flow_run_id": {"any_": ids}}}))),
        ("artifacts", json.dumps(_api(api, "POST", "artifacts/filter", {"artifacts": {"flow_run_id": {"any_": ids}}}))),
    ]
    assert "[REDACTED]" in api_texts[2][1]  # the failed verdicts' warnings reached Prefect's logs, redacted
    _events_settled(db)
    database = _database_text(db)
    assert str(config) in database and "hf_token" in database  # the search sees the parameters it must
    searched = [("stdout", result.stdout), ("stderr", result.stderr), ("prefect database", database), *api_texts,
                *((path, text) for path, text in _texts(tmp_path) if path != config)]
    assert any(path == summary for path, _ in searched)
    for secret in CONFIG_SECRETS:
        leaks = [str(where) for where, text in searched if secret in text]
        assert not leaks, f"{secret} stored in {leaks}"
