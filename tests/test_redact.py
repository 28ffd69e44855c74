"""Redaction: key shapes and configured key values leave every written text; ordinary prose is untouched."""

from __future__ import annotations

import json
import logging

import pyarrow.parquet as pq
import pytest

from dialogbench import redact as redact_module
from dialogbench.backends.base import Completion
from dialogbench.cells.records import failure_rows
from dialogbench.redact import REDACTED, RedactFilter, redact, register, secrets_from

OPENAI = "sk-" + "abcDEF0123456789abcdef0123"
PROJECT = "sk-proj-" + "Q1w2E3r4T5y6U7i8O9p0aSdFgHjK"


@pytest.mark.parametrize("text, secret", [
    (f"Incorrect API key provided: got '{OPENAI}', expected 'x'", OPENAI),
    (f"key {PROJECT} was revoked", PROJECT),
    ("Authorization: Bearer eyJhbGciOi.JIUzI1NiIsInR5cCI6.IkpXVCJ9x1", "eyJhbGciOi.JIUzI1NiIsInR5cCI6.IkpXVCJ9x1"),
    ("token hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ012345 is invalid", "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345"),
    ("aws AKIA" + "IOSFODNN7EXAMPLE rejected", "AKIAIOSFODNN7EXAMPLE"),
    ("https://api.example.com/v1?api_key=s3cr3tvalue99&x=1", "s3cr3tvalue99"),
    ('{"api-key": "s3cr3tvalue99"}', "s3cr3tvalue99"),
    ("password=hunter2hunter2", "hunter2hunter2"),
    ("ghp_" + "a" * 36, "ghp_" + "a" * 36),
])
def test_key_shapes_are_redacted(text, secret):
    out = redact(text)
    assert secret not in out and REDACTED in out


@pytest.mark.parametrize("text", [
    "skip the task-1 and risk-free sk-learn steps", "task-123456789012345678901234567890",
    "the bearer of bad news carried responsibilities", "max_tokens=64, prompt_tokens=12 (tokens: 64)",
    "HTTP 401: Unauthorized", "MT-1", "botchat_unieval: 3 computed, 0 failed", "ASKING for AKIA",
    "Choice: Yes\nIndex: 4\nReason: repetitive", "passwords: none given", "",
])
def test_ordinary_text_is_untouched(text):
    assert redact(text) == text


def test_configured_key_values_are_redacted_whatever_their_shape(monkeypatch, make_config):
    monkeypatch.setenv("MY_JUDGE_KEY", "plain-looking-value-42")
    monkeypatch.delenv("DIALOGBENCH_OPENAI_API_KEY", raising=False)
    config = make_config(models=[{"name": "bot", "backend": "scripted", "script": ["x"], "api_key_env": "MY_JUDGE_KEY"}])
    assert secrets_from(config) == ["plain-looking-value-42"]
    assert redact("the server said: plain-looking-value-42 is wrong") == f"the server said: {REDACTED} is wrong"


def test_a_config_registers_its_key_variables_as_it_loads(monkeypatch, make_config):
    """Read at redact time: a key exported after the config was loaded is still caught."""
    make_config(models=[{"name": "bot", "backend": "scripted", "script": ["x"], "api_key_env": "LATE_KEY_VAR"}])
    monkeypatch.setenv("LATE_KEY_VAR", "exported-later-1234")
    assert redact("got exported-later-1234") == f"got {REDACTED}"


def test_short_values_are_not_secrets(monkeypatch):
    monkeypatch.setenv("DIALOGBENCH_OPENAI_API_KEY", "EMPTY")
    register("abc")
    assert redact("EMPTY abc") == "EMPTY abc"


def test_completion_errors_and_failure_rows_are_redacted(tmp_path):
    completion = Completion(text=None, error=f"HTTP 401: got '{OPENAI}'")
    assert OPENAI not in completion.error

    class FakeCell:
        key, item_id, model, judge = "k", "MT-1", "bot", None

    rows = failure_rows(stage="s", failed=[(FakeCell(), f"boom {PROJECT}", None)], run_id="r")
    assert PROJECT not in rows[0]["error"] and REDACTED in rows[0]["error"]


def test_run_rows_are_redacted(tmp_path):
    from dialogbench.lake import Lake
    from dialogbench.runs import StageReport, record_stage

    lake = Lake(tmp_path / "lake")
    record_stage(lake, run_id="r1", report=StageReport("s", detail={"why": f"got {OPENAI}"}), config="c.yaml")
    (path,) = (tmp_path / "lake").rglob("*.parquet")
    assert OPENAI not in json.dumps(pq.read_table(path).to_pylist(), default=str)


def test_filter_redacts_message_args_and_exception():
    try:
        raise RuntimeError(f"bad key {OPENAI}")
    except RuntimeError:
        record = logging.getLogger("x").makeRecord("x", logging.ERROR, __file__, 1, "failed: %s", (PROJECT,),
                                                   exc_info=__import__("sys").exc_info())
    assert RedactFilter().filter(record) is True
    text = logging.Formatter().format(record)
    assert OPENAI not in text and PROJECT not in text and text.count(REDACTED) == 2


def test_install_redacts_records_of_handlers_added_later(caplog):
    """The record factory redacts at creation: a handler added after ``install`` (Prefect's) sees no key."""
    redact_module.install()
    redact_module.install()  # idempotent: one wrapper
    with caplog.at_level(logging.INFO, logger="dialogbench.test"):
        logging.getLogger("dialogbench.test").info("endpoint said %s", OPENAI)
    assert OPENAI not in caplog.text and REDACTED in caplog.text
    factory = logging.getLogRecordFactory()
    assert factory._dialogbench_redacts
