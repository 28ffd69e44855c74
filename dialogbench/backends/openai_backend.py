"""Any OpenAI-compatible chat endpoint (vLLM serve, llama.cpp server, a hosted API).

One HTTP request per conversation, ``model.concurrency`` in flight at most, our own retries
(exponential backoff with jitter on 429, 5xx, timeouts and connection errors; none on other 4xx).
"""

from __future__ import annotations

import os
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, Callable, Sequence, TypeVar

import openai

from dialogbench.run import stopping
from dialogbench.backends.base import BackendError, BatchStats, Completion, Conversation, Sampling, check_seeds
from dialogbench.backends.chat_format import TemplatedChat
from dialogbench.backends.formats import OutputFormat, enforced, enforced_kinds, per_conversation
from dialogbench.run.config import ModelConfig
from dialogbench.backends.tokenizers import count_cl100k

T = TypeVar("T")
TOKENS_PER_MESSAGE = 4  # role markers and separators the chat format adds around each message


def is_retryable(exc: BaseException) -> bool:
    """429, 5xx, timeouts and connection errors are worth another try; other errors are not."""
    if isinstance(exc, openai.APIConnectionError):  # APITimeoutError is a subclass
        return True
    return isinstance(exc, openai.APIStatusError) and (exc.status_code == 429 or exc.status_code >= 500)


def with_retries(call: Callable[[], T], *, max_retries: int, base_s: float = 0.5, cap_s: float = 20.0,
                 sleep: Callable[[float], None] = time.sleep) -> T:
    """Run ``call``; on a retryable error wait ``min(cap, base * 2**n)`` (half of it jittered) and
    try again, ``max_retries`` times at most. The last error is raised as is."""
    for attempt in range(max_retries + 1):
        try:
            return call()
        except Exception as exc:
            if attempt == max_retries or not is_retryable(exc):
                raise
            delay = min(cap_s, base_s * 2**attempt)
            sleep(delay / 2 + random.uniform(0, delay / 2))
    raise AssertionError("unreachable")


def describe_error(exc: BaseException) -> str:
    """A one-line message: status code and the server's own message where there is one."""
    if isinstance(exc, openai.APITimeoutError):
        return "request timed out"
    if isinstance(exc, openai.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else None
        return f"HTTP {exc.status_code}: {message or exc.message}"
    if isinstance(exc, openai.APIConnectionError):
        return f"connection error: {exc.__cause__ or exc}"
    return f"{type(exc).__name__}: {exc}"


MAX_TOKEN_COUNT = 2**31 - 1  # the lake's token columns are int32


def _token_count(reported: Any, estimate: Callable[[], int]) -> int:
    """A usage count as the endpoint reported it when it is an int in 0..MAX_TOKEN_COUNT, else ``estimate()``
    (no usage at all, or a count no reply can have: negative, past int32, not an integer)."""
    if isinstance(reported, int) and not isinstance(reported, bool) and 0 <= reported <= MAX_TOKEN_COUNT:
        return reported
    return min(estimate(), MAX_TOKEN_COUNT)


class OpenAIBackend(TemplatedChat):
    abandonable = True  # at a stop's deadline the requests in flight are left to finish unread (dialogbench.run.stopping)

    def __init__(self, model: ModelConfig, *, client: Any = None,
                 backoff_base_s: float = 0.5, backoff_cap_s: float = 20.0) -> None:
        self.model = model
        self.stats = BatchStats()
        self.attempts = 0  # HTTP requests sent, retries included
        self._lock = threading.Lock()
        self._backoff = (backoff_base_s, backoff_cap_s)
        self.version = model.weights or ""  # until a reply names the served model (and its fingerprint)
        self._kinds = enforced_kinds(model)
        # For a remote API there is no template to probe: ``auto`` means native for both.
        self.system_native = model.chat_template.system != "merge"
        self.leading_native = model.chat_template.leading_assistant != "user_filler"
        if client is None:
            base_url = model.base_url or os.environ.get(model.base_url_env)
            if not base_url:
                raise BackendError(f"model {model.name!r}: no base_url, and environment variable "
                                   f"{model.base_url_env} is not set (the endpoint's base URL, e.g. "
                                   "http://host:8000/v1)")
            api_key = os.environ.get(model.api_key_env) or "EMPTY"
            client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=model.timeout_s)
        self.client = client

    def count_tokens(self, conversation: Conversation) -> int:
        """A CL100K estimate: the served model's own tokenizer is not available here."""
        return sum(count_cl100k(m["content"]) + TOKENS_PER_MESSAGE for m in self._adapt(conversation))

    def count_tokens_many(self, conversations: Sequence[Conversation]) -> list[int]:
        return [self.count_tokens(c) for c in conversations]

    def _request(self, messages: Conversation, sampling: Sampling, format_: OutputFormat | None = None) -> Any:
        with self._lock:
            self.attempts += 1
        extra: dict[str, Any] = {} if sampling.seed is None else {"seed": sampling.seed}
        if format_ is not None and format_.kind == "json":  # OpenAI's structured outputs (vLLM, SGLang too)
            extra["response_format"] = {"type": "json_schema", "json_schema": {
                "name": format_.name.replace("-", "_"), "schema": format_.schema_dict, "strict": True}}
        elif format_ is not None:  # a regex: vLLM server's own extension (structured_outputs: all)
            extra["extra_body"] = {"structured_outputs": {"regex": format_.regex}}
        return self.client.chat.completions.create(
            model=self.model.weights, messages=messages, temperature=sampling.temperature,
            top_p=sampling.top_p, max_tokens=sampling.max_tokens, **extra)

    def _one(self, conversation: Conversation, sampling: Sampling, format_: OutputFormat | None = None) -> Completion:
        messages = self._adapt(conversation)
        tries = 0

        def attempt() -> Any:
            nonlocal tries
            tries += 1
            return self._request(messages, sampling, format_)

        try:
            response = with_retries(attempt, max_retries=self.model.max_retries,
                                    base_s=self._backoff[0], cap_s=self._backoff[1])
            text = response.choices[0].message.content or ""
            if not isinstance(text, str):  # the client library does not check a server's reply
                raise TypeError(f"the reply's content is not text but {type(text).__name__}")
        except Exception as exc:  # one bad item never fails the batch
            suffix = f" (after {tries} attempts)" if tries > 1 else ""
            return Completion(text=None, error=describe_error(exc) + suffix)
        usage = getattr(response, "usage", None)
        served = " ".join(str(v) for v in (getattr(response, "model", None) or self.model.weights,
                                            getattr(response, "system_fingerprint", None)) if v)
        extra = {"engine": served, "constraint": format_.label if format_ else None}
        # the endpoint's counts when it gives plausible ones, else our estimates: a server's usage is not checked
        # by the client library, and a count past an int32 column (or a float, a string) would fail the whole chunk
        prompt = _token_count(getattr(usage, "prompt_tokens", None), lambda: self.count_tokens(conversation))
        completion = _token_count(getattr(usage, "completion_tokens", None), lambda: count_cl100k(text))
        return Completion(text=text, prompt_tokens=prompt, completion_tokens=completion, **extra)

    def generate(self, conversations: Sequence[Conversation], *, sampling: Sampling,
                 seeds: Sequence[int] | None = None,
                 formats: OutputFormat | Sequence[OutputFormat | None] | None = None) -> list[Completion]:
        """One request per conversation; with ``seeds``, each request carries its own ``seed``; an
        enforced format goes as ``response_format`` (JSON schema) or vLLM's ``structured_outputs``."""
        seeds = check_seeds(conversations, seeds)
        per_item = [sampling] * len(conversations) if seeds is None else [replace(sampling, seed=s) for s in seeds]
        applied = [enforced(f, self._kinds) for f in per_conversation(formats, len(conversations))]
        start = time.perf_counter()
        workers = max(1, min(self.model.concurrency, len(conversations)))
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="openai")
        try:
            futures = [pool.submit(self._one, *args) for args in zip(conversations, per_item, applied)]
            stopping.wait(futures)  # a stop's deadline abandons the requests in flight
            results = [future.result() for future in futures]
        finally:
            pool.shutdown(wait=not stopping.abandoned(), cancel_futures=True)
        served = next((r.engine for r in results if r.engine), None)
        if served:
            self.version = served
        self.stats.record(results, seconds=time.perf_counter() - start)
        return results
