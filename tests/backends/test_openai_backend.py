"""OpenAIBackend against a real local OpenAI-compatible server (llm-katan's echo backend, which
needs no model and injects 429/5xx/latency/overload), plus a fake client for the timing-free parts."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Iterator

import httpx
import openai
import pytest

from dialogbench.backends.base import BackendError, Sampling
from dialogbench.backends.formats import OutputFormat
from dialogbench.backends.openai_backend import OpenAIBackend, is_retryable, with_retries
from dialogbench.run.config import ModelConfig

URL_ENV, KEY_ENV = "DIALOGBENCH_TEST_KATAN_URL", "DIALOGBENCH_TEST_KATAN_KEY"
FAST = {"backoff_base_s": 0.001, "backoff_cap_s": 0.01}  # retries without waiting in tests
SYSTEM = {"role": "system", "content": "You are Alice."}


class Katan(SimpleNamespace):
    url: str

    def requests_seen(self) -> int:
        """Every chat request the server answered, errors included (its /stats counter)."""
        with urllib.request.urlopen(f"{self.url}/stats", timeout=10) as response:
            return json.load(response)["total"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# One echo server per failure mode, each used by the tests named in the comment.
SERVERS: dict[str, tuple[str, ...]] = {
    "plain": (),  # order, token counts, templates
    # request 1 succeeds, 2-3 get 429, 4+ get 504 (timeout-after is checked first): persistent faults
    "faults": ("--rate-limit-after", "1", "--timeout-after", "3"),
    "flaky": ("--error-rate", "0.4", "--validate-keys", "--api-keys", "openai=right-key"),  # 500s, 401
    "slow": ("--latency-ms", "1500", "--max-concurrent", "1"),  # one at a time, 1.5 s each: timeouts
    "guarded": ("--max-inflight", "2", "--max-concurrent", "16", "--latency-ms", "300"),  # 503 beyond 2
}


@contextmanager
def katan_servers(workdir: Path, configs: dict[str, tuple[str, ...]]) -> Iterator[dict[str, Katan]]:
    """Run one ``llm-katan --backend echo`` per config on free ports, started in parallel
    (60 s for all to answer /health), terminated when the block ends."""
    exe = Path(sys.executable).parent / "llm-katan"
    exe_path = str(exe) if exe.exists() else shutil.which("llm-katan")
    if exe_path is None:
        pytest.skip("llm-katan is not installed (pip install '.[test]')")
    procs: dict[str, tuple[subprocess.Popen, Path]] = {}
    servers: dict[str, Katan] = {}
    try:
        for name, flags in configs.items():
            port = _free_port()
            log = workdir / f"katan-{name}.log"
            with log.open("w") as out:
                procs[name] = (subprocess.Popen(
                    [exe_path, "--model", "echo", "--backend", "echo", "--host", "127.0.0.1", "--port", str(port),
                     "--stats-file", str(workdir / f"stats-{name}.json"), "--log-level", "warning", *flags],
                    stdout=out, stderr=subprocess.STDOUT), log)
            servers[name] = Katan(url=f"http://127.0.0.1:{port}")
        deadline = time.monotonic() + 60
        for name, (proc, log) in procs.items():
            while True:
                if proc.poll() is not None:
                    pytest.fail(f"llm-katan {name} exited with {proc.returncode}: {log.read_text()[-2000:]}")
                try:
                    with urllib.request.urlopen(f"{servers[name].url}/health", timeout=2):
                        break
                except OSError:
                    if time.monotonic() > deadline:
                        pytest.fail(f"llm-katan {name} did not answer /health within 60 s")
                    time.sleep(0.1)
        yield servers
    finally:
        for proc, _ in procs.values():
            proc.terminate()
        for proc, _ in procs.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


@pytest.fixture(scope="module")
def servers(tmp_path_factory) -> Iterator[dict[str, Katan]]:
    with katan_servers(tmp_path_factory.mktemp("katan"), SERVERS) as running:
        yield running


def backend_for(server: Katan, monkeypatch, *, key: str = "test-key", **fields) -> OpenAIBackend:
    monkeypatch.setenv(URL_ENV, f"{server.url}/v1")
    monkeypatch.setenv(KEY_ENV, key)
    model = ModelConfig(**{"name": "m", "backend": "openai", "weights": "served-name",
                           "base_url_env": URL_ENV, "api_key_env": KEY_ENV, **fields})
    return OpenAIBackend(model, **FAST)


def conv(i: int) -> list[dict[str, str]]:
    return [SYSTEM, {"role": "assistant", "content": "Hi there."}, {"role": "user", "content": f"question {i}"}]


def test_batch_comes_back_in_order_with_token_counts(servers, monkeypatch):
    backend = backend_for(servers["plain"], monkeypatch, concurrency=4)
    results = backend.generate([conv(i) for i in range(8)], sampling=Sampling(temperature=0.3, max_tokens=17))
    assert all(r.ok for r in results), [r.error for r in results]
    for i, result in enumerate(results):
        assert result.text.endswith(f"User: question {i}")
        assert "model=echo" in result.text and "max_tokens=17 temperature=0.3" in result.text
        assert "messages=3" in result.text  # auto = native: system and leading assistant sent as is
        assert result.prompt_tokens == 7  # katan's usage: words over all messages
        assert result.completion_tokens > 0
    assert backend.stats.calls == 1 and backend.stats.per_call == [8] and backend.stats.conversations == 8
    assert backend.stats.prompt_tokens == 56
    assert backend.stats.completion_tokens == sum(r.completion_tokens for r in results)


def test_merge_template_sends_merged_conversation(servers, monkeypatch):
    backend = backend_for(servers["plain"], monkeypatch, chat_template={"system": "merge"})
    (result,) = backend.generate([[SYSTEM, {"role": "user", "content": "hello"}]], sampling=Sampling())
    assert "messages=1" in result.text and result.text.endswith("User: You are Alice.\n\nhello")


def test_persistent_429_and_5xx_are_retried_then_reported(servers, monkeypatch):
    server = servers["faults"]
    backend = backend_for(server, monkeypatch, concurrency=1, max_retries=1)
    ok, limited, timed_out = backend.generate([conv(0), conv(1), conv(2)], sampling=Sampling())
    assert ok.ok and ok.text.endswith("question 0")
    assert limited.text is None and limited.error == "HTTP 429: rate limit exceeded (after 2 attempts)"
    assert timed_out.text is None and timed_out.error == "HTTP 504: upstream request timeout (after 2 attempts)"
    assert backend.attempts == 5 and server.requests_seen() == 5


def test_random_500s_are_retried_until_success(servers, monkeypatch):
    server = servers["flaky"]
    before = server.requests_seen()
    backend = backend_for(server, monkeypatch, key="right-key", concurrency=4, max_retries=20)
    results = backend.generate([conv(i) for i in range(20)], sampling=Sampling())
    assert all(r.ok for r in results), [r.error for r in results]
    assert [r.text.rsplit(" ", 1)[1] for r in results] == [str(i) for i in range(20)]
    # every attempt reached the server, and some were retries (P(no injected 500 in 20) ~ 4e-5)
    assert backend.attempts == server.requests_seen() - before > 20


def test_other_4xx_is_not_retried(servers, monkeypatch):
    backend = backend_for(servers["flaky"], monkeypatch, key="wrong-key", max_retries=5)
    (result,) = backend.generate([conv(0)], sampling=Sampling())
    assert result.error.startswith("HTTP 401: invalid API key") and backend.attempts == 1


def test_timeout_fails_only_that_item(servers, monkeypatch):
    # The server takes one request at a time, 1.5 s each: the second waits ~3 s, past the 2.3 s timeout.
    backend = backend_for(servers["slow"], monkeypatch, concurrency=2, max_retries=0, timeout_s=2.3)
    results = backend.generate([conv(0), conv(1)], sampling=Sampling())
    assert sorted(r.ok for r in results) == [False, True]
    (failed,) = [r for r in results if not r.ok]
    assert failed.error == "request timed out" and failed.text is None


def test_concurrency_bounded_as_seen_by_server(servers, monkeypatch):
    # katan answers 503 to any request beyond 2 in flight; 300 ms each keeps them overlapping.
    bounded = backend_for(servers["guarded"], monkeypatch, concurrency=2, max_retries=0)
    results = bounded.generate([conv(i) for i in range(6)], sampling=Sampling())
    assert all(r.ok for r in results), [r.error for r in results]
    unbounded = backend_for(servers["guarded"], monkeypatch, concurrency=6, max_retries=0)  # control
    assert any(r.error and r.error.startswith("HTTP 503") for r in
               unbounded.generate([conv(i) for i in range(6)], sampling=Sampling()))


def test_missing_base_url_env_names_the_variable(monkeypatch):
    monkeypatch.delenv("DIALOGBENCH_NO_SUCH_URL", raising=False)
    model = ModelConfig(name="m", backend="openai", weights="x", base_url_env="DIALOGBENCH_NO_SUCH_URL")
    with pytest.raises(BackendError, match="DIALOGBENCH_NO_SUCH_URL"):
        OpenAIBackend(model)


def test_key_defaults_to_empty_and_client_retries_are_off(monkeypatch):
    monkeypatch.setenv(URL_ENV, "http://127.0.0.1:9/v1")
    monkeypatch.delenv(KEY_ENV, raising=False)
    backend = OpenAIBackend(ModelConfig(name="m", backend="openai", weights="x", base_url_env=URL_ENV,
                                        api_key_env=KEY_ENV, timeout_s=7))
    assert backend.client.api_key == "EMPTY" and backend.client.max_retries == 0
    assert backend.client.timeout == 7


# --- fake client: exact retry schedule, request fields, concurrency peak -------------------------

_REQUEST = httpx.Request("POST", "http://fake/v1/chat/completions")


def _status_error(status: int) -> openai.APIStatusError:
    return openai.APIStatusError(f"Error code: {status}", response=httpx.Response(status, request=_REQUEST),
                                 body={"error": {"message": f"injected {status}"}})


def test_with_retries_backs_off_exponentially_on_retryable_errors():
    errors = [_status_error(429), _status_error(503), openai.APITimeoutError(request=_REQUEST),
              openai.APIConnectionError(request=_REQUEST)]
    calls, sleeps = [], []

    def call() -> str:
        calls.append(1)
        if errors:
            raise errors.pop(0)
        return "ok"

    assert with_retries(call, max_retries=5, base_s=1.0, cap_s=4.0, sleep=sleeps.append) == "ok"
    assert len(calls) == 5
    for sleep, nominal in zip(sleeps, [1.0, 2.0, 4.0, 4.0]):  # jitter keeps it in [d/2, d]
        assert nominal / 2 <= sleep <= nominal


def test_with_retries_gives_up_and_skips_other_4xx():
    assert not is_retryable(_status_error(400)) and not is_retryable(_status_error(404))
    calls = []

    def bad_request() -> None:
        calls.append(1)
        raise _status_error(400)

    with pytest.raises(openai.APIStatusError):
        with_retries(bad_request, max_retries=5, sleep=lambda s: None)
    assert len(calls) == 1

    def always_429() -> None:
        calls.append(1)
        raise _status_error(429)

    with pytest.raises(openai.APIStatusError):
        with_retries(always_429, max_retries=2, sleep=lambda s: None)
    assert len(calls) == 1 + 3


class FakeClient:
    """``client.chat.completions.create`` that records its kwargs and peak concurrency."""

    def __init__(self, *, delay_s: float = 0.0, usage: bool = True, served: dict | None = None) -> None:
        self.delay_s, self.usage = delay_s, usage
        self.served = served or {}  # response fields: model, system_fingerprint
        self.requests: list[dict] = []
        self.in_flight = self.peak = 0
        self._lock = threading.Lock()
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

    def create(self, **kwargs):
        with self._lock:
            self.requests.append(kwargs)
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        time.sleep(self.delay_s)
        with self._lock:
            self.in_flight -= 1
        text = "echo " + kwargs["messages"][-1]["content"]
        usage = SimpleNamespace(prompt_tokens=11, completion_tokens=3) if self.usage else None
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=text))], usage=usage,
                               **self.served)


def fake_backend(client: FakeClient, **fields) -> OpenAIBackend:
    model = ModelConfig(**{"name": "m", "backend": "openai", "weights": "served-name", **fields})
    return OpenAIBackend(model, client=client, **FAST)


def test_concurrency_never_exceeds_limit():
    client = FakeClient(delay_s=0.1)
    results = fake_backend(client, concurrency=3).generate([conv(i) for i in range(12)], sampling=Sampling())
    assert [r.text for r in results] == [f"echo question {i}" for i in range(12)]
    assert 2 <= client.peak <= 3


def test_request_fields_and_token_fallback():
    client = FakeClient(usage=False)
    backend = fake_backend(client)
    sampling = Sampling(temperature=0.5, top_p=0.8, max_tokens=9, seed=3)
    (result,) = backend.generate([[{"role": "user", "content": "hello world"}]], sampling=sampling)
    assert client.requests[0] == {"model": "served-name", "messages": [{"role": "user", "content": "hello world"}],
                                  "temperature": 0.5, "top_p": 0.8, "max_tokens": 9, "seed": 3}
    assert result.prompt_tokens == 2 + 4 and result.completion_tokens == 3  # "echo hello world" in CL100K
    backend.generate([conv(0)], sampling=Sampling(seed=None))
    assert "seed" not in client.requests[1]


def test_count_tokens_is_cl100k_plus_four_per_message():
    backend = fake_backend(FakeClient())
    assert backend.count_tokens([{"role": "user", "content": "hello world"}]) == 6
    assert backend.count_tokens([SYSTEM, {"role": "user", "content": "hello world"}]) == 6 + 4 + 4  # "You are Alice." is 4 tokens


def test_each_request_sends_its_own_seed():
    client = FakeClient()
    backend = fake_backend(client, concurrency=4)
    sampling = Sampling(temperature=0.9, max_tokens=9, seed=3)
    results = backend.generate([conv(i) for i in range(6)], sampling=sampling, seeds=[100 + i for i in range(6)])
    assert [r.text for r in results] == [f"echo question {i}" for i in range(6)]
    # requests run concurrently, so match each to its conversation by its last message
    sent = {r["messages"][-1]["content"]: r for r in client.requests}
    assert {content: r["seed"] for content, r in sent.items()} == {f"question {i}": 100 + i for i in range(6)}
    assert all(r["temperature"] == 0.9 and r["max_tokens"] == 9 for r in client.requests)


def test_seed_count_must_match_conversations():
    client = FakeClient()
    backend = fake_backend(client)
    with pytest.raises(ValueError, match="1 seeds for 2 conversations"):
        backend.generate([conv(0), conv(1)], sampling=Sampling(), seeds=[1])
    assert client.requests == [] and backend.stats.calls == 0


VERDICT = OutputFormat(name="yes-no", regex="Yes|No")
MOVE = OutputFormat.json("spyfall-vote", {"type": "object", "properties": {"name": {"enum": ["player1"]}},
                                          "required": ["name"], "additionalProperties": False})


def test_json_formats_go_as_response_format_and_regexes_stay_free_by_default():
    client = FakeClient()
    results = fake_backend(client).generate([conv(0), conv(1)], sampling=Sampling(), formats=[MOVE, VERDICT])
    sent = {r["messages"][-1]["content"]: r for r in client.requests}
    assert sent["question 0"]["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "spyfall_vote", "schema": MOVE.schema_dict, "strict": True}}
    assert "response_format" not in sent["question 1"] and "extra_body" not in sent["question 1"]
    assert [r.constraint for r in results] == ["json:spyfall-vote", None]


def test_all_sends_regexes_as_vllm_server_structured_outputs_and_off_sends_nothing():
    client = FakeClient()
    fake_backend(client, structured_outputs="all").generate([conv(0)], sampling=Sampling(), formats=VERDICT)
    assert client.requests[0]["extra_body"] == {"structured_outputs": {"regex": "Yes|No"}}
    off = FakeClient()
    fake_backend(off, structured_outputs="off").generate([conv(0)], sampling=Sampling(), formats=MOVE)
    assert "response_format" not in off.requests[0] and "extra_body" not in off.requests[0]


def test_each_reply_records_the_served_model_and_its_fingerprint():
    client = FakeClient(served={"model": "gpt-4o-2024-08-06", "system_fingerprint": "fp_123"})
    backend = fake_backend(client, weights="gpt-4o")
    (result,) = backend.generate([conv(0)], sampling=Sampling())
    assert result.engine == "gpt-4o-2024-08-06 fp_123" and backend.version == "gpt-4o-2024-08-06 fp_123"
    (plain,) = fake_backend(FakeClient(), weights="served-name").generate([conv(0)], sampling=Sampling())
    assert plain.engine == "served-name"  # no model in the response: the configured name


class UsageClient(FakeClient):
    """A server whose usage counts are whatever the test says (the client library checks none of them)."""

    def __init__(self, prompt_tokens, completion_tokens, content="echo") -> None:
        super().__init__()
        self.counts, self.content = (prompt_tokens, completion_tokens), content

    def create(self, **kwargs):
        response = super().create(**kwargs)
        response.usage = SimpleNamespace(prompt_tokens=self.counts[0], completion_tokens=self.counts[1])
        response.choices[0].message.content = self.content
        return response


@pytest.mark.parametrize("reported", [2**31, 10**23, -5, 7.5, float("nan"), "12", True, None])
def test_an_implausible_usage_count_is_replaced_by_the_estimate(reported):
    """A count past the int32 token columns failed the whole chunk at the write, every night."""
    (result,) = fake_backend(UsageClient(reported, reported)).generate([[{"role": "user", "content": "hello world"}]],
                                                                      sampling=Sampling())
    assert result.ok and (result.prompt_tokens, result.completion_tokens) == (2 + 4, 1)  # CL100K: "hello world", "echo"


def test_a_plausible_usage_count_is_kept():
    (result,) = fake_backend(UsageClient(0, 2**31 - 1)).generate([conv(0)], sampling=Sampling())
    assert (result.prompt_tokens, result.completion_tokens) == (0, 2**31 - 1)


def test_a_reply_whose_content_is_not_text_is_a_failed_item():
    (result,) = fake_backend(UsageClient(1, 1, content=99999999999999999999999)).generate([conv(0)],
                                                                                         sampling=Sampling())
    assert not result.ok and result.error == "TypeError: the reply's content is not text but int"
