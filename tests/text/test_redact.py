"""Redaction: key shapes and configured key values leave every written text; ordinary prose is untouched."""

from __future__ import annotations

import base64
import json
import logging

import pyarrow.parquet as pq
import pytest

from dialogbench.text import redact as redact_module
from dialogbench.backends.base import Completion
from dialogbench.cells.records import failure_rows
from dialogbench.text.redact import (REDACTED, RedactedError, RedactFilter, SecretField, redact, redact_exception,
                                redact_tree, register, secret_fields, secret_key, secret_values, secrets_from)

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
    served = Completion(text="hi", engine="https://alice:pw123456@host/m")  # an endpoint's weights, until it answers
    assert served.engine == f"https://alice:{REDACTED}@host/m"

    class FakeCell:
        key, item_id, model, judge = "k", "MT-1", "bot", None

    rows = failure_rows(stage="s", failed=[(FakeCell(), f"boom {PROJECT}", None)], run_id="r")
    assert PROJECT not in rows[0]["error"] and REDACTED in rows[0]["error"]


def test_run_rows_are_redacted(tmp_path):
    from dialogbench.run.registry import open_lake
    from dialogbench.run.runs import StageReport, record_stage

    lake = open_lake(tmp_path / "lake")
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


# --- secrets written in a config: URL passwords, Authorization values, keys naming a secret -----------------------

BASIC = base64.b64encode(b"alice:PLANTEDbasicPw42").decode()


@pytest.fixture(autouse=True)
def _registered_values_stay_in_their_test():
    """Configs register their secret values process-wide; a test's plants must not redact another test's text."""
    before = set(redact_module._VALUES)
    yield
    redact_module._VALUES.intersection_update(before)


@pytest.mark.parametrize("text, expected", [
    ("https://alice:s3cretPw@weights.example.com/org/m.gguf", "https://alice:[REDACTED]@weights.example.com/org/m.gguf"),
    ("git clone https://oauth2:glpat-abc123@gitlab.example/x.git", "git clone https://oauth2:[REDACTED]@gitlab.example/x.git"),
    ("s3://AKIDX:abc+def=@bucket", "s3://AKIDX:[REDACTED]@bucket"),
    ("https://u:p@ss@host/x", "https://u:[REDACTED]@host/x"),  # a password holding '@': cut at the last one
    (f"Authorization: Basic {BASIC}", "Authorization: Basic [REDACTED]"),
    (f"{{'authorization': 'Basic {BASIC}'}}", "{'authorization': 'Basic [REDACTED]'}"),
    ('"Proxy-Authorization": "Token abcdef"', '"Proxy-Authorization": "Token [REDACTED]"'),
    ("Authorization: abcdef0123", "Authorization: [REDACTED]"),
    (f"sent header Basic {BASIC} twice", "sent header Basic [REDACTED] twice"),
    ("OPENAI_API_KEY=abcdef123", "OPENAI_API_KEY=[REDACTED]"),
    ('{"hf_token": "plainvalue42"}', '{"hf_token": "[REDACTED]"}'),
    ("client_secret: abcdefgh", "client_secret: [REDACTED]"),
    ("session_id=abcdef0123", "session_id=[REDACTED]"),
    ("Cookie: sid=abcdef0123", "Cookie: [REDACTED]"),
])
def test_config_shaped_secrets_in_text_are_redacted(text, expected):
    assert redact(text) == expected
    assert redact(expected) == expected  # redacting twice changes nothing


@pytest.mark.parametrize("text", [
    "Basic authentication is required", "basic usage", "Basic dGV4dA==",  # base64 of 'text': no user:password
    "http://127.0.0.1:8765/runs/x/report.html", "ssh://git@host:22/repo", "mailto:me@example.com",
    "Unexpected token: '}' at 3", "Authorization required", "the author: Jane", "auth_type: basic",
    "engine:\n  auth:\n    user: alice\n  authorization:\n  - x",  # YAML: a key naming a secret ends its line
])
def test_text_that_only_resembles_a_credential_is_untouched(text):
    assert redact(text) == text


@pytest.mark.parametrize("key", ["hf_token", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "token", "use_auth_token",
                                 "password", "passwd", "Authorization", "auth", "secret", "client_secret",
                                 "clientSecret", "api_key", "apiKey", "APIKEY", "x-api-key", "private_key",
                                 "aws_access_key", "credentials", "cookie", "session", "session_id"])
def test_keys_naming_a_secret(key):
    assert secret_key(key)


@pytest.mark.parametrize("key", ["api_key_env", "base_url_env", "max_tokens", "judge_max_tokens", "tokenizer",
                                 "tokenizer_mode", "session_len", "auth_type", "token_path", "secret_name",
                                 "revision", "weights", "name", "author", "keys"])
def test_keys_that_only_mention_one(key):
    assert not secret_key(key)


def test_redact_tree_hides_secret_keys_at_any_depth_and_redacts_every_string():
    data = {"name": "bot", "max_tokens": 64, "api_key_env": "MY_KEY",
            "engine": {"HF_Token": "not-shaped-at-all", "dtype": "bfloat16", "auth": {"user": "alice", "pin": 12345678},
                       "headers": [f"Authorization: Basic {BASIC}"], "session_len": 4096, "token": "", "secret": None},
            "weights": "https://alice:pw123456@host/m", "revision": "ghp_" + "a" * 36,
            "script": ["Choice: No", True]}
    assert redact_tree(data) == {
        "name": "bot", "max_tokens": 64, "api_key_env": "MY_KEY",
        "engine": {"HF_Token": REDACTED, "dtype": "bfloat16", "auth": {"user": REDACTED, "pin": REDACTED},
                   "headers": ["Authorization: Basic [REDACTED]"], "session_len": 4096, "token": "", "secret": None},
        "weights": "https://alice:[REDACTED]@host/m", "revision": REDACTED, "script": ["Choice: No", True]}
    rows = [{"token": "bot-a", "note": f"got {OPENAI}"}]
    assert redact_tree(rows, by_key=False) == [{"token": "bot-a", "note": f"got {REDACTED}"}]  # a column, not a key


@pytest.mark.parametrize("config", ["configs/demo.yaml", "configs/nightly.yaml"])
def test_the_shipped_configs_hold_nothing_to_redact(config):
    from dialogbench.run.registry import load_config
    from tests.conftest import REPO_ROOT

    dump = load_config(REPO_ROOT / config, root=REPO_ROOT).model_dump(mode="json")
    assert redact_tree(dump) == dump and secret_fields(dump) == []


def test_secret_fields_name_each_field_and_what_it_holds():
    dump = {"models": [{"name": "a", "engine": {"dtype": "auto"}},
                       {"name": "b", "weights": "https://u:pw@host/m", "revision": "hf_" + "x" * 24,
                        "engine": {"hf_token": "plain", "auth": {"user": "u", "password": "p"}, "token": "",
                                   "headers": ["X-Trace: 1", f"Authorization: Basic {BASIC}"],
                                   "extra": "password=abcdefgh"}}],
            "report": {"url": "http://u:pw@reports:8765"}}
    assert secret_fields(dump) == [
        SecretField("models[1].weights", "url_password", "weights"),
        SecretField("models[1].revision", "shaped", "revision"),
        SecretField("models[1].engine.hf_token", "named", "hf_token"),
        SecretField("models[1].engine.auth", "named", "auth"),  # once, not per inner field
        SecretField("models[1].engine.headers[1]", "header", "headers"),
        SecretField("models[1].engine.extra", "assignment", "extra"),
        SecretField("report.url", "url_password", "url"),
    ]


def test_secret_values_are_what_register_needs():
    dump = {"weights": "https://alice:PLANTEDurl0042@host/m", "engine": {"auth": {"password": "PLANTEDpw0042"},
                                                                        "headers": [f"Authorization: Basic {BASIC}"]},
            "name": "bot"}
    assert secret_values(dump) == sorted({"PLANTEDurl0042", "PLANTEDpw0042", BASIC, "PLANTEDbasicPw42"})


def test_a_loaded_config_registers_its_secrets_so_any_text_quoting_them_is_redacted(make_config):
    make_config(models=[{"name": "bot", "backend": "scripted", "script": ["x"],
                         "weights": "https://alice:PLANTEDurlPw42@host/m", "engine": {"auth": {"password": 87654321}}}])
    assert redact("HTTP 403: credentials PLANTEDurlPw42 / 87654321 refused") == \
        f"HTTP 403: credentials {REDACTED} / {REDACTED} refused"


def test_exceptions_are_redacted_in_place_keeping_their_type():
    exc = ValueError(f"weights https://alice:pw123456@host/m: 404 ({OPENAI})")
    assert redact_exception(exc) is exc and str(exc) == f"weights https://alice:{REDACTED}@host/m: 404 ({REDACTED})"
    clean = KeyError("bot-a")
    assert redact_exception(clean) is clean and clean.args == ("bot-a",)


def test_an_exception_whose_text_is_not_its_args_gives_way_to_a_redacted_one():
    exc = FileNotFoundError(2, "No such file", f"/models/{OPENAI}")  # the filename is an attribute, not an arg
    replaced = redact_exception(exc)
    assert isinstance(replaced, RedactedError) and replaced.__cause__ is exc
    assert OPENAI not in str(replaced) and str(replaced).startswith("FileNotFoundError: [Errno 2] No such file")


# --- URLs read by parsing each one, not by a pattern: passwords holding / # ? @ :, tokens as the user name -------

URL_SPELLINGS = [  # (text, the secret it holds, what redact makes of it)
    ("postgresql://user:p/a#ss@host/db", "p/a#ss", "postgresql://user:[REDACTED]@host/db"),  # issue 32's spelling
    ("https://alice:pa/ss@weights.example.com/m.gguf", "pa/ss", "https://alice:[REDACTED]@weights.example.com/m.gguf"),
    ("https://alice:pa#ss@host/m", "pa#ss", "https://alice:[REDACTED]@host/m"),
    ("https://alice:pa?ss@host/m?rev=main", "pa?ss", "https://alice:[REDACTED]@host/m?rev=main"),
    ("https://alice:pa@ss@host/m", "pa@ss", "https://alice:[REDACTED]@host/m"),
    ("https://alice:pa:ss@host:8443/m", "pa:ss", "https://alice:[REDACTED]@host:8443/m"),
    ("mysql://root:/#?@:x@db.internal:3306/", "/#?@:x", "mysql://root:[REDACTED]@db.internal:3306/"),
    ("https://u:pw/x@[2001:db8::1]:8080/m", "pw/x", "https://u:[REDACTED]@[2001:db8::1]:8080/m"),
    ("redis://:only/pass@cache:6379/0", "only/pass", "redis://:[REDACTED]@cache:6379/0"),
    ("postgresql+psycopg2://svc:p/w@db/x", "p/w", "postgresql+psycopg2://svc:[REDACTED]@db/x"),
    ("https://ghp_" + "T0k" * 12 + "@github.com/org/repo.git", "ghp_" + "T0k" * 12,
     "https://[REDACTED]@github.com/org/repo.git"),  # a token as the user name, no password
    ("https://ghp_xxx@host/", "ghp_xxx", "https://[REDACTED]@host/"),
    ("https://glpat-Abc123def456ghi789jk@gitlab.com/g/p.git", "glpat-Abc123def456ghi789jk",
     "https://[REDACTED]@gitlab.com/g/p.git"),
    ("https://0123456789abcdef0123456789abcdef01234567:x-oauth-basic@github.com/o/r",
     "0123456789abcdef0123456789abcdef01234567", "https://[REDACTED]:[REDACTED]@github.com/o/r"),
    ("https://api.example.com/v1/m?api_key=s3cr3t&page=2", "s3cr3t", "https://api.example.com/v1/m?api_key=[REDACTED]&page=2"),
    ("https://acct.blob.core.windows.net/c/m.bin?sv=2022&sig=AbC%2Fd", "AbC%2Fd",
     "https://acct.blob.core.windows.net/c/m.bin?sv=2022&sig=[REDACTED]"),
    ("https://b.s3.amazonaws.com/m?X-Amz-Signature=f00d&X-Amz-Date=20240101", "f00d",
     "https://b.s3.amazonaws.com/m?X-Amz-Signature=[REDACTED]&X-Amz-Date=20240101"),
    ("https://maps.example.com/x?key=AbCd12&token=t0k&pwd=pw1", "t0k",
     "https://maps.example.com/x?key=[REDACTED]&token=[REDACTED]&pwd=[REDACTED]"),
    ("https://app.example/cb#access_token=q1w2e3&token_type=bearer", "q1w2e3",
     "https://app.example/cb#access_token=[REDACTED]&token_type=bearer"),
    ("clone of https://u:p/a#ss@host/r.git failed, retrying", "p/a#ss",
     "clone of https://u:[REDACTED]@host/r.git failed, retrying"),
    ("{'weights': 'postgresql://user:p/a#ss@host/db'}", "p/a#ss", "{'weights': 'postgresql://user:[REDACTED]@host/db'}"),
    ('"https://u:p\\"q@host/m"', 'p\\"q', '"https://u:[REDACTED]@host/m"'),  # a quote in the password
    ("a https://u:pw/1@h/m and https://v:pw#2@k/n", "pw#2", "a https://u:[REDACTED]@h/m and https://v:[REDACTED]@k/n"),
    ("(see https://u:pw/1@h)", "pw/1", "(see https://u:[REDACTED]@h)"),
]


@pytest.mark.parametrize("text, secret, expected", URL_SPELLINGS)
def test_a_url_is_parsed_for_its_password_token_user_and_secret_query_values(text, secret, expected):
    assert redact(text) == expected and secret not in expected
    assert redact(expected) == expected  # redacting twice changes nothing


@pytest.mark.parametrize("text", [
    "https://registry.npmjs.org/@types/node", "https://mastodon.social/@alice", "ssh://git@host:22/repo",
    "https://alice@host/x", "https://x-access-token@host/x", "http://127.0.0.1:8765/runs/x/report.html?tab=2#top",
    "https://api.example.com/v1?model=m&max_tokens=64&token_type=bearer", "mailto:me@example.com",
    "https://example.com/a:b@c/d",  # a ':' in the path: not a user name
])
def test_urls_without_a_secret_are_untouched(text):
    assert redact(text) == text


def test_every_password_spelling_is_cut_from_every_url_shape():
    """Passwords made of the characters that end a URL's parts, in every position, in URLs of several shapes:
    none survives, and the host and path after it do."""
    import itertools

    specials = "/#?@:"
    passwords = {"".join(p) + "Zz9" for n in (1, 2) for p in itertools.product(specials, repeat=n)}
    passwords |= {f"Zz{c}9{d}" for c in specials for d in specials} | {f"{c}Zz9" for c in specials}
    shapes = ["https://user:{}@host.example/path/m.gguf", "postgresql://user:{}@db:5432/name?sslmode=require",
              "s3://KEYID:{}@bucket/key", "https://user:{}@[::1]/x#frag", "note: fetch https://user:{}@h/x, then"]
    for password, shape in itertools.product(sorted(passwords), shapes):
        text = shape.format(password)
        out = redact(text)
        assert out == shape.format(REDACTED), (text, out)


@pytest.mark.parametrize("key", ["pwd", "PWD", "pass", "db_pass", "PGPASSWORD", "MYSQL_PWD", "REDIS_PASSWORD",
                                 "Ocp-Apim-Subscription-Key", "X-Api-Key", "subscriptionKey", "MY_SERVICE_KEY",
                                 "my.service.key", "GITLAB_TOKEN", "ghtoken", "AWS_SECRET_ACCESS_KEY", "db.password",
                                 "encryption_key", "PRIVATE-TOKEN"])
def test_more_keys_naming_a_secret(key):
    assert secret_key(key)


@pytest.mark.parametrize("key", ["cell_key", "cache_key", "sort_key", "public_key", "generation_key", "key",
                                 "eos_token", "pad_token", "pass_rate", "passes", "bypass", "PGPASSFILE_path"])
def test_more_keys_that_only_mention_one(key):
    assert not secret_key(key)


@pytest.mark.parametrize("text, expected", [
    ("PGPASSWORD=hunter2hunter2 psql -h db", "PGPASSWORD=[REDACTED] psql -h db"),
    ("Ocp-Apim-Subscription-Key: 0123456789abcdef", "Ocp-Apim-Subscription-Key: [REDACTED]"),
    ('{"X-Api-Key": "abcdef012345"}', '{"X-Api-Key": "[REDACTED]"}'),
    ("Driver=x;Server=db;UID=sa;PWD=hunter2hunter2;", "Driver=x;Server=db;UID=sa;PWD=[REDACTED];"),
    ("export GITLAB_TOKEN=plainvalue42", "export GITLAB_TOKEN=[REDACTED]"),
    ("token glpat-" + "Ab1" * 7 + " expired", "token [REDACTED] expired"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0 was rejected",
     "jwt [REDACTED] was rejected"),
    ("slack xoxb-123456789012-abcdefABCDEF sent", "slack [REDACTED] sent"),
    ("Authorization: Bearer [REDACTED]", "Authorization: Bearer [REDACTED]"),  # the scheme's word is no secret
])
def test_secrets_under_the_common_names_and_prefixes_are_redacted_in_text(text, expected):
    assert redact(text) == expected


@pytest.mark.parametrize("text", ["cell_key: 0123456789abcdef", "eos_token: <|endoftext|>", "sort_key=created_at",
                                  "PWD is the working folder", "tokenize.TokenError: unterminated string literal",
                                  "KeyError: 'bot-a-long-name'"])
def test_data_keys_in_text_are_untouched(text):
    assert redact(text) == text


# What the red team of issue 32 found stored word for word: each is redacted in a config's tree, noted, registered.
ISSUE_32 = {"weights": "postgresql://user:p/a#ss@host/db", "revision": "glpat-" + "Xy9" * 7,
            "engine": {"pwd": "hunter2x", "env": {"PGPASSWORD": "pgPLANTED42"},
                       "headers": {"Ocp-Apim-Subscription-Key": "ocpPLANTED42"},
                       "download": "https://ghp_" + "PLANTED0" * 5 + "@github.com/o/r.git"}}


def test_the_issue_spellings_are_redacted_noted_and_registered():
    tree = redact_tree(ISSUE_32)
    assert tree == {"weights": "postgresql://user:[REDACTED]@host/db", "revision": REDACTED,
                    "engine": {"pwd": REDACTED, "env": {"PGPASSWORD": REDACTED},
                               "headers": {"Ocp-Apim-Subscription-Key": REDACTED},
                               "download": "https://[REDACTED]@github.com/o/r.git"}}
    assert secret_fields(ISSUE_32) == [
        SecretField("weights", "url_password", "weights"), SecretField("revision", "shaped", "revision"),
        SecretField("engine.pwd", "named", "pwd"), SecretField("engine.env.PGPASSWORD", "named", "PGPASSWORD"),
        SecretField("engine.headers.Ocp-Apim-Subscription-Key", "named", "Ocp-Apim-Subscription-Key"),
        SecretField("engine.download", "url_user", "download")]
    assert secret_values(ISSUE_32) == sorted({"p/a#ss", "hunter2x", "pgPLANTED42", "ocpPLANTED42",
                                              "ghp_" + "PLANTED0" * 5})
    assert secret_fields({"url": "https://x/?api_key=abc"}) == [SecretField("url", "url_query", "url")]


def test_run_configs_holds_the_issue_spellings_redacted(tmp_path, make_config):
    from dialogbench.history.snapshot import record_config
    from dialogbench.run.registry import open_lake

    config = make_config(models=[{"name": "bot", "backend": "scripted", "script": ["x"], **ISSUE_32}])
    record_config(open_lake(tmp_path / "lake"), config, run_id="r1", config_path="c.yaml")
    (path,) = (tmp_path / "lake" / "run_configs").rglob("*.parquet")
    stored = json.dumps(pq.read_table(path).to_pylist(), default=str)
    assert not [s for s in secret_values(ISSUE_32) if s in stored] and "user:[REDACTED]@host/db" in stored


def test_a_long_text_of_at_signs_is_read_in_linear_time():
    import time

    text = "https://h/" + "a@b/" * 50_000 + " https://u:" + "@" * 50_000
    started = time.monotonic()
    redact(text)
    assert time.monotonic() - started < 2


@pytest.mark.parametrize("line", [
    "/tmp/x/secrets.yaml: models[0].weights: looks like a secret written in the config",
    "secrets.yaml: models[0].revision: looks like a secret",
    "configs/token.json: 3 models",
    "C:\\\\cfg\\\\password.txt: read",
])
def test_a_file_named_for_a_secret_is_not_a_key_and_its_line_is_kept(line):
    assert redact(line) == line  # validate's notes start with the config's path: they must reach the user whole
