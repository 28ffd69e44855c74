"""`dialogbench validate` finds each model's weights or endpoint without loading anything: a hub name in the local
Hugging Face cache (or a download to come), an endpoint that answers GET /models and lists the model. No network:
a fake cache in tmp and a local HTTP server."""

from __future__ import annotations

import json
import os
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from dialogbench.run.registry import run_for
from dialogbench.cli import main
from dialogbench.run.config import ModelConfig
from dialogbench.run.preflight import endpoint_findings, locate, weights_findings
from dialogbench.run.registry import load_config
from tests.conftest import config_dict


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)


# -- hub names: in the local Hugging Face cache, or a download to come ---------------------------------------------

@pytest.fixture
def hub(tmp_path, monkeypatch) -> Path:
    cache = tmp_path / "hub"
    snapshot = cache / "models--org--cached" / "snapshots" / "0123abcd"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (cache / "models--org--cached" / "refs").mkdir()
    (cache / "models--org--cached" / "refs" / "main").write_text("0123abcd")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    return cache


def vllm(weights: str, **extra) -> ModelConfig:
    return ModelConfig(name="m", backend="vllm", weights=weights, **extra)


def test_a_cached_hub_model_is_found(hub):
    assert weights_findings(vllm("org/cached")) == ([], [])


def test_a_hub_model_not_cached_is_a_download_to_come_or_an_error_offline(hub, monkeypatch):
    problems, notes = weights_findings(vllm("org/absent"))
    assert problems == [] and len(notes) == 1
    assert "'org/absent' is not in the Hugging Face cache" in notes[0] and str(hub) in notes[0]
    assert "will download it" in notes[0]
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    problems, notes = weights_findings(vllm("org/absent"))
    assert notes == [] and len(problems) == 1
    assert "HF_HUB_OFFLINE is set" in problems[0] and "huggingface-cli download org/absent" in problems[0]
    assert weights_findings(vllm("org/cached")) == ([], [])  # offline, cached: fine


def test_engine_download_dir_is_the_cache_vllm_reads(hub, tmp_path):
    other = tmp_path / "elsewhere"
    other.mkdir()
    problems, notes = weights_findings(vllm("org/cached", engine={"download_dir": str(other)}))
    assert problems == [] and len(notes) == 1 and str(other) in notes[0]


def test_a_name_that_is_neither_a_path_nor_a_hub_name_is_a_problem(hub):
    problems, notes = weights_findings(vllm("not/a/hub/name"))
    assert notes == [] and problems == ["weights: 'not/a/hub/name' is no file or folder here, nor a Hugging Face "
                                        "model name (org/name)"]


def test_local_paths_and_other_backends_are_left_to_the_runs_own_check(hub, tmp_path):
    folder = tmp_path / "weights"
    folder.mkdir()
    assert weights_findings(vllm(str(folder))) == ([], [])
    assert weights_findings(vllm("./missing/folder")) == ([], [])  # model_findings names it (for run too)
    assert weights_findings(ModelConfig(name="t", backend="transformers", weights="org/absent")) == ([], [])


# -- endpoints: GET {base_url}/models, within a timeout ------------------------------------------------------------

class _Endpoint(BaseHTTPRequestHandler):
    models: list[str] = ["served-model", "other"]
    status = 200
    body: bytes | None = None
    seen: list[dict] = []

    def do_GET(self):  # noqa: N802 (http.server's name)
        type(self).seen.append({"path": self.path, "auth": self.headers.get("Authorization")})
        if self.path != "/v1/models" or self.status != 200:
            self.send_response(404 if self.path != "/v1/models" else self.status)
            self.end_headers()
            return
        body = self.body if self.body is not None else json.dumps(
            {"object": "list", "data": [{"id": m, "object": "model"} for m in self.models]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def endpoint(monkeypatch):
    handler = type("Handler", (_Endpoint,), {"seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("TEST_ENDPOINT_URL", f"http://127.0.0.1:{server.server_address[1]}/v1")
    monkeypatch.delenv("TEST_ENDPOINT_KEY", raising=False)
    yield handler
    server.shutdown()
    server.server_close()
    thread.join()


def openai(weights: str = "served-model") -> ModelConfig:
    return ModelConfig(name="api", backend="openai", weights=weights, base_url_env="TEST_ENDPOINT_URL",
                       api_key_env="TEST_ENDPOINT_KEY")


def test_an_endpoint_serving_the_model_is_fine_and_gets_the_key(endpoint, monkeypatch):
    assert endpoint_findings(openai()) == ([], [])
    assert endpoint.seen == [{"path": "/v1/models", "auth": None}]
    monkeypatch.setenv("TEST_ENDPOINT_KEY", "sk-test")
    assert endpoint_findings(openai()) == ([], [])
    assert endpoint.seen[-1] == {"path": "/v1/models", "auth": "Bearer sk-test"}


def test_an_endpoint_not_serving_the_model_says_what_it_serves(endpoint):
    problems, notes = endpoint_findings(openai("gpt-typo"))
    url = os.environ["TEST_ENDPOINT_URL"]
    assert notes == [] and problems == [f"endpoint: {url} does not serve 'gpt-typo' (weights); it lists: "
                                        "served-model, other"]


def test_an_endpoint_without_a_listing_is_a_note(endpoint):
    endpoint.status = 404
    problems, notes = endpoint_findings(openai())
    assert problems == [] and len(notes) == 1 and "no model listing" in notes[0] and "HTTP 404" in notes[0]
    endpoint.status = 200
    endpoint.body = b"<html>not json</html>"
    problems, notes = endpoint_findings(openai())
    assert problems == [] and notes and "answered no model list" in notes[0]


def test_a_refused_key_and_a_server_error_are_problems(endpoint):
    endpoint.status = 401
    problems, notes = endpoint_findings(openai())
    assert notes == [] and "HTTP 401" in problems[0] and "TEST_ENDPOINT_KEY is refused (it is not set)" in problems[0]
    endpoint.status = 500
    problems, _ = endpoint_findings(openai())
    assert problems[0].endswith("answered HTTP 500")


def test_an_unreachable_endpoint_is_a_problem(monkeypatch):
    with socket.socket() as sock:  # a port nothing listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("TEST_ENDPOINT_URL", f"http://127.0.0.1:{port}/v1")
    problems, notes = endpoint_findings(openai(), timeout_s=5.0)
    assert notes == [] and len(problems) == 1
    assert problems[0].startswith(f"endpoint: http://127.0.0.1:{port}/v1 is unreachable (GET "
                                  f"http://127.0.0.1:{port}/v1/models: ")
    assert "is the server running" in problems[0]


def test_no_url_is_left_to_model_findings(monkeypatch):
    monkeypatch.delenv("TEST_ENDPOINT_URL", raising=False)
    assert endpoint_findings(openai()) == ([], [])


# -- validate: one listing per endpoint, problems exit 1, notes printed ---------------------------------------------

def _with_endpoint_judge(lake_dir, weights: str) -> dict:
    data = config_dict(lake_dir)
    data["judges"] = [{"name": "judge", "backend": "openai", "weights": weights, "base_url_env": "TEST_ENDPOINT_URL",
                       "api_key_env": "TEST_ENDPOINT_KEY"}]
    return data


def test_locate_asks_each_endpoint_once(endpoint, make_config, lake_dir):
    data = _with_endpoint_judge(lake_dir, "served-model")
    data["models"][1] = {"name": "bot-b", "backend": "openai", "weights": "served-model",
                         "base_url_env": "TEST_ENDPOINT_URL", "api_key_env": "TEST_ENDPOINT_KEY"}
    found = locate(run_for(make_config(data), source="c.yaml"))
    assert found.machine == [] and found.notes == []
    assert len(endpoint.seen) == 1


def test_validate_exits_1_naming_the_model_its_endpoint_does_not_serve(endpoint, config_file, lake_dir, capsys):
    path = config_file(_with_endpoint_judge(lake_dir, "judge-typo"))
    assert main(["validate", "--config", str(path)]) == 1
    out = capsys.readouterr().out
    first = out.splitlines()[0]  # what the exit code says, first: not "valid"
    assert first.startswith(f"{path}: not runnable on this machine yet (1 problem below, exit 1); "), first
    assert "the config itself is valid (2 models; " in first
    assert "not runnable on this machine yet:" in out
    assert f"{path}: model 'judge': endpoint: " in out and "does not serve 'judge-typo'" in out


def test_validate_passes_when_the_endpoint_serves_the_model(endpoint, config_file, lake_dir, capsys):
    path = config_file(_with_endpoint_judge(lake_dir, "served-model"))
    assert main(["validate", "--config", str(path)]) == 0
    assert "not runnable" not in capsys.readouterr().out


def test_locate_notes_a_hub_model_to_download(hub, config_file, lake_dir):
    data = config_dict(lake_dir)
    data["models"][0] = {"name": "bot-a", "backend": "vllm", "weights": "org/absent"}
    found = locate(run_for(load_config(config_file(data)), source="c"))
    assert found.machine == [] and len(found.notes) == 1
    assert found.notes[0].startswith("c: model 'bot-a': weights: 'org/absent' is not in the Hugging Face cache")
