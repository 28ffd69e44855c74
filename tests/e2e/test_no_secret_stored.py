"""No API key is stored: a real `dialogbench run` against a local OpenAI-compatible endpoint that answers
401 quoting the key it was sent (as vLLM's server does), then every file the run left is searched."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from tests.e2e.conftest import REPO, run_cli

pytestmark = pytest.mark.slow

SHAPED_KEY = "sk-test-PLANTED1234567890abcdefXYZ"   # caught by its shape and by its value
PLAIN_KEY = "PLANTEDplainvalue0042"                   # no known shape: caught only as a configured value


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
        "judges": [{"name": "judge", "backend": "scripted", "script": ["Choice: No\nIndex: None\nReason: fine"]}],
        "botchat": {"judge": "judge", "n": [4], "limit": 1,
                    "dataset": str(REPO / "data_lake/raw/botchat/mutual_test.jsonl"),
                    "unieval_examples": str(REPO / "data_lake/raw/botchat/unieval_examples.json")},
    }))
    summary = tmp_path / "summary.json"
    result = run_cli(["run", "--config", str(config), "--json", str(summary)], tmp_path)
    assert result.returncode == 4, result.stderr[-3000:]  # every generation failed: the run is Failed (fail_on)

    # The endpoint was asked and refused; the failure is stored (redacted) and logged (redacted).
    assert len(_Refuses.hits) == 2 and all(h.endswith("/chat/completions") for h in _Refuses.hits)
    failures = [json.loads(text) for path, text in _texts(tmp_path / "lake")
                if "failures" in path.parts and path.suffix == ".parquet" and text.startswith("[")]
    errors = [row["error"] for rows in failures for row in rows]
    assert len(errors) == 2 and all("HTTP 401" in e and "[REDACTED]" in e for e in errors), errors
    prefect_texts = "".join(text for _, text in _texts(tmp_path / "prefect"))
    assert "[REDACTED]" in prefect_texts  # the failure's log line (and its failures artifact) reached Prefect's db

    searched = [("stdout", result.stdout), ("stderr", result.stderr), *_texts(tmp_path)]
    assert any(path == summary for path, _ in searched)
    assert any(str(path).endswith(".db") for path, _ in searched)  # Prefect's sqlite (logs, parameters)
    for key in (SHAPED_KEY, PLAIN_KEY):
        leaks = [str(where) for where, text in searched if key in text]
        assert not leaks, f"{key} stored in {leaks}"
