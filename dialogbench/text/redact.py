"""Secrets out of everything dialogbench writes: error texts, logs, run summaries, the lake, Prefect's records.

An endpoint's error can quote the API key it was sent (vLLM's 401 body says ``got 'sk-…', expected 'sk-…'``), and
error texts are stored word for word; a config can hold a secret in any field (an engine's ``hf_token``, a password
in a ``weights`` URL), and the config is stored too (``run_configs``, Prefect's flow-run parameters). The rules live
here, in one place:

- ``redact(text)``: the configured keys' values (each model's ``api_key_env``, read at call time, so a key exported
  after the config was loaded is still caught), the secret values of every config loaded in this process
  (``register``, called by ``dialogbench.run.config``), every URL's secrets, found by parsing each URL
  (``dialogbench.text.urlsecrets``: a password holding ``/``, ``#``, ``?``, ``@`` or ``:``, a token as the user name, a
  secret query value), ``Authorization:`` values and ``Basic`` credentials, key-shaped tokens (``sk-…``, ``hf_…``,
  ``glpat-…``, JWTs, …) and ``name=value``-style assignments whose name is a key naming a secret
  (``PGPASSWORD=…``, ``Ocp-Apim-Subscription-Key: …``) are replaced by ``[REDACTED]``.
- ``redact_tree(data)``: a JSON-like structure (a config's dump, a flow's parameters) with the values of keys that
  name a secret (``hf_token``, ``password``, ``Authorization``, … at any depth, case-insensitive) replaced, and
  every string redacted as above.
- ``secret_fields(data)``: where a config holds a secret (field path and kind), for ``validate``'s notes.

Log records are redacted where they are made (``install``), so every handler, Prefect's console and API handlers
included, only ever sees redacted text; the same filter makes their control characters visible (``textsafe``), since
a log line quoting model output (a failed cell's first error) is printed to a terminal.
"""

from __future__ import annotations

import base64
import binascii
import functools
import logging
import os
import re
from typing import Any, Callable, Iterable, Iterator, NamedTuple, Protocol, Sequence

from dialogbench.text.textsafe import visible
from dialogbench.text.urlsecrets import url_secrets

REDACTED = "[REDACTED]"
MIN_SECRET = 8  # shorter configured values ("EMPTY", "1") would mangle ordinary text and protect nothing

# Environment variables whose values are secrets: every ModelConfig's api_key_env registers itself
# (dialogbench.run.config), plus the usual names of hosted-API keys.
_ENV_NAMES: set[str] = {"DIALOGBENCH_OPENAI_API_KEY", "OPENAI_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}
_VALUES: set[str] = set()  # literal secrets registered directly (``register``)

_B = r"(?<![A-Za-z0-9_-])"  # start of a token: no key starts inside a word ("task-1", "risk-free")


def _basic(match: re.Match) -> str:
    """``Basic <base64 of user:password>`` → ``Basic [REDACTED]``; prose ("Basic authentication") is left."""
    try:
        decoded = base64.b64decode(match.group(2), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return match.group(0)
    return match.group(1) + REDACTED if ":" in decoded else match.group(0)


def _replace(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with each span replaced by ``[REDACTED]``, overlapping ones as one."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    parts, done = [], 0
    for start, end in merged:
        parts += [text[done:start], REDACTED]
        done = end
    return "".join([*parts, text[done:]])


def _urls(text: str) -> str:
    """Every URL's password, token-shaped user name and secret query values (``dialogbench.text.urlsecrets``)."""
    if "://" not in text:
        return text
    return _replace(text, (s[:2] for s in url_secrets(text, secret_name=secret_key)))


# An Authorization value is its scheme's word and then the credential: the scheme alone is no secret.
_SCHEMES = frozenset({"basic", "bearer", "token", "digest", "negotiate"})
# name=value / name: value on one line, the name any word ``secret_key`` says names a secret (OPENAI_API_KEY=…,
# "hf_token": "…", PGPASSWORD=…, Ocp-Apim-Subscription-Key: …, pwd=…); the value 6+ characters, so that prose
# ("password: none") is left.
_ASSIGNMENT = re.compile(r"(?<![A-Za-z0-9_./\\-])([A-Za-z_][A-Za-z0-9_.-]*)([\"']?[ \t]*[=:][ \t]*[\"']?)"
                         r"(?!\[REDACTED\])([^\s\"',;&}]{6,})")


def _assignment(match: re.Match) -> str:
    if not secret_key(match.group(1)) or match.group(3).lower() in _SCHEMES:
        return match.group(0)
    return match.group(1) + match.group(2) + REDACTED


def _sub(pattern: re.Pattern, replacement: Any) -> Callable[[str], str]:
    return lambda text: pattern.sub(replacement, text)


_SHAPES = [  # the key shapes of common providers
    r"sk-[A-Za-z0-9_-]{16,}",                                     # OpenAI, sk-proj-…, sk-ant-…
    r"hf_[A-Za-z0-9]{20,}",                                       # Hugging Face
    r"(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z])",                  # AWS access key id
    r"AIza[0-9A-Za-z_-]{35}",                                     # Google API key
    r"gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,}",  # GitHub
    r"gl(?:pat|dt|rt|ptt|ft|oas|soat|cbt)-[A-Za-z0-9_.-]{20,}",   # GitLab
    r"xox[abposr]-[A-Za-z0-9-]{10,}",                             # Slack
    r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",  # a JWT: header.payload.signature
]

# (kind, rule), in the order they apply. The kind says what was found (``secret_fields``); a URL's kind is its
# secret's (``url_password``, ``url_user``, ``url_query``: ``secret_kind``).
_RULES: list[tuple[str, Callable[[str], str]]] = [
    ("url", _urls),
    # an Authorization header's value, whatever its scheme (Basic, Bearer, Token, Digest, …)
    ("header", _sub(re.compile(r"(?i)(\b(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
                               r"(?:(?:basic|bearer|token|digest|negotiate)[ \t]+)?+)(?!\[REDACTED\])[^\s\"',;}]+"),
                    r"\1" + REDACTED)),
    ("header", _sub(re.compile(r"(?i)(\bbasic\s+)([A-Za-z0-9+/]{4,}={0,2})(?![A-Za-z0-9+/=])"), _basic)),
    ("shaped", _sub(re.compile(_B + "(?:" + "|".join(_SHAPES) + ")"), REDACTED)),
    ("header", _sub(re.compile(r"(\b(?:Bearer|BEARER|bearer)\s+)(?=[^\s]*[0-9])[A-Za-z0-9._~+/=-]{16,}"),
                    r"\1" + REDACTED)),  # a token has digits
    ("assignment", lambda text: _ASSIGNMENT.sub(_assignment, text)),
]

# A key names a secret when one of its words does (``hf_token``, ``Authorization``, ``clientSecret``, ``x-api-key``,
# ``pwd``), a word ends in one (``PGPASSWORD``, ``GHTOKEN``), it ends in ``pass`` or in ``key`` after a word that
# is no kind of data key (``Ocp-Apim-Subscription-Key``, ``MY_SERVICE_KEY``; not ``cell_key``, ``public_key``),
# and its last word does not say it holds something else: ``api_key_env`` names a variable, ``session_len`` is a
# length, ``auth_type`` a kind; ``max_tokens`` counts tokens (``tokens`` is not ``token``), ``eos_token`` is one of
# a tokenizer's.
SECRET_WORDS = frozenset({"token", "secret", "secrets", "password", "passwd", "pwd", "passphrase", "auth", "oauth",
                          "authorization", "credential", "credentials", "cookie", "cookies", "apikey", "session",
                          "sessionid", "bearer"})
SECRET_ENDINGS = ("password", "passwd", "passphrase", "secret", "token", "apikey", "pwd")
SECRET_PAIRS = frozenset({("api", "key"), ("private", "key"), ("access", "key"), ("signing", "key")})
NOT_A_SECRET = frozenset({"env", "var", "file", "path", "dir", "url", "uri", "endpoint", "type", "mode", "method",
                          "name", "len", "length", "size", "count", "limit", "max", "min", "timeout", "ttl",
                          "enabled", "required", "error", "errors", "exception", "warning",  # TokenError: …
                          # a file's name (secrets.yaml: …, a path's last part, as a log line starts): not a key
                          "yaml", "yml", "json", "jsonl", "toml", "ini", "cfg", "conf", "txt", "log", "csv", "py"})
DATA_KEYS = frozenset({"cell", "cache", "sort", "primary", "foreign", "partition", "hash", "row", "group", "join",
                       "lookup", "unique", "dedup", "idempotency", "map", "dict", "item", "record", "column", "table",
                       "stage", "model", "run", "judge", "config", "generation", "opponent", "earlier", "fingerprint",
                       "fp", "order", "index", "shard", "object", "public", "dataset", "field", "sample", "turn",
                       "prompt", "family", "board", "unit", "chunk", "task", "batch", "split", "result", "next",
                       "last", "first", "composite", "natural", "routing", "hot", "short", "keyboard"})
TOKENIZER_TOKENS = frozenset({"eos", "bos", "pad", "unk", "sep", "cls", "mask", "stop", "special", "start", "end"})


def watch_env(*names: str) -> None:
    """Treat the values of these environment variables as secrets (read at each ``redact``)."""
    _ENV_NAMES.update(n for n in names if n)


def register(*values: str | None) -> None:
    """Treat these literal values as secrets (a key passed in code rather than through the environment)."""
    _VALUES.update(v for v in values if v and len(v) >= MIN_SECRET)


class KeyedModel(Protocol):
    """What ``secrets_from`` reads of a model entry (a ``run.config.ModelConfig``): the text layer does not import
    the run's config, which imports it (every entry registers its key here)."""

    @property
    def api_key_env(self) -> str: ...


class KeyedConfig(Protocol):
    """What ``secrets_from`` reads of a run's config (a ``run.config.Config``)."""

    @property
    def models(self) -> Sequence[KeyedModel]: ...

    @property
    def judges(self) -> Sequence[KeyedModel]: ...


def secrets_from(config: KeyedConfig) -> list[str]:
    """The configured keys' values: each model's and judge's ``api_key_env``, read now (and watched)."""
    names = [m.api_key_env for m in [*config.models, *config.judges]]
    watch_env(*names)
    return [v for v in (os.environ.get(n) for n in names) if v and len(v) >= MIN_SECRET]


def _known_values() -> list[str]:
    values = set(_VALUES)
    values.update(v for v in (os.environ.get(n) for n in _ENV_NAMES) if v and len(v) >= MIN_SECRET)
    return sorted(values, key=len, reverse=True)  # a longer secret first, in case one contains another


def redact(text: str) -> str:
    """``text`` with every known secret value and every secret-shaped string replaced by ``[REDACTED]``."""
    if not text:
        return text
    for value in _known_values():
        text = text.replace(value, REDACTED)
    for _, rule in _RULES:
        text = rule(text)
    return text


def secret_kind(text: str) -> str | None:
    """What kind of secret ``text`` holds by its shape (``url_password``, ``url_user``, ``url_query``, ``header``,
    ``shaped``, ``assignment``), the first rule that finds one; None when none does."""
    if not isinstance(text, str):
        return None
    if "://" in text:
        for span in url_secrets(text, secret_name=secret_key):
            return span.kind
    for kind, rule in _RULES[1:]:
        if rule(text) != text:
            return kind
    return None


def secret_key(name: Any) -> bool:
    """Whether a mapping key names a secret (see ``SECRET_WORDS``), case-insensitive, any separator or camelCase."""
    return _secret_name(str(name))


@functools.lru_cache(maxsize=4096)  # the same few names, over and over (every config dump, every log line)
def _secret_name(name: str) -> bool:
    words = re.split(r"[^a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower())
    words = [w for w in words if w]
    if not words or words[-1] in NOT_A_SECRET:
        return False
    last, before = words[-1], (words[-2] if len(words) > 1 else "")
    if last == "token" and before in TOKENIZER_TOKENS:
        return False
    if (last == "key" and before and before not in DATA_KEYS) or last == "pass":
        return True
    return (any(w in SECRET_WORDS or w.endswith(SECRET_ENDINGS) for w in words)
            or any(pair in SECRET_PAIRS for pair in zip(words, words[1:])))


def _scalar_secret(value: Any) -> bool:
    """A value under a key naming a secret that is worth hiding: a non-empty string or a number (YAML reads
    ``password: 12345678`` as an int); None, booleans and empty strings say nothing."""
    return (isinstance(value, str) and value != "") or (isinstance(value, (int, float)) and not isinstance(value, bool))


def redact_tree(data: Any, *, by_key: bool = True, _secret: bool = False) -> Any:
    """A copy of a JSON-like structure (dicts, lists, scalars) holding no secret: with ``by_key``, every value under
    a key naming a secret (``secret_key``, at any depth) becomes ``[REDACTED]`` (a mapping or list there: each of
    its scalars); every other string is ``redact``-ed (keys too). ``by_key=False`` only redacts strings (a table
    whose column names are not config keys)."""
    if isinstance(data, dict):
        return {(redact(k) if isinstance(k, str) else k):
                redact_tree(v, by_key=by_key, _secret=_secret or (by_key and secret_key(k))) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [redact_tree(v, by_key=by_key, _secret=_secret) for v in data]
    if _secret and _scalar_secret(data):
        return REDACTED
    return redact(data) if isinstance(data, str) else data


class SecretField(NamedTuple):
    """A place in a config that holds a secret: its ``path`` (``models[1].engine.hf_token``), the ``kind`` of what
    was found there (``named``: a key naming a secret; else ``secret_kind``'s) and the key it sits under."""

    path: str
    kind: str
    key: str


def _walk(data: Any, path: str, key: str) -> Iterator[SecretField]:
    if isinstance(data, dict):
        for k, v in data.items():
            inner = f"{path}.{k}" if path else str(k)
            if secret_key(k) and any(_scalar_secret(x) for x in _scalars(v)):
                yield SecretField(inner, "named", str(k))
            else:
                yield from _walk(v, inner, str(k))
    elif isinstance(data, (list, tuple)):
        for i, v in enumerate(data):
            yield from _walk(v, f"{path}[{i}]", key)
    elif isinstance(data, str):
        kind = secret_kind(data)
        if kind:
            yield SecretField(path, kind, key)


def _scalars(data: Any) -> Iterator[Any]:
    if isinstance(data, dict):
        for v in data.values():
            yield from _scalars(v)
    elif isinstance(data, (list, tuple)):
        for v in data:
            yield from _scalars(v)
    else:
        yield data


def secret_fields(data: Any) -> list[SecretField]:
    """Every place in a JSON-like structure (a config's ``model_dump(mode="json")``) holding a secret: a key naming
    one with a value (reported once, not its inner fields), or a string a rule of ``redact`` would change."""
    return list(_walk(data, "", ""))


_CAPTURE = [  # the secret part of a string, for ``secret_values`` (a URL's: ``url_secrets``)
    re.compile(r"(?i)\bauthorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:(?:basic|bearer|token|digest|negotiate)[ \t]+)?+"
               r"([^\s\"',;}]+)"),
    re.compile(r"(?i)\bbasic\s+([A-Za-z0-9+/]{4,}={0,2})(?![A-Za-z0-9+/=])"),
    re.compile(r"\b(?:Bearer|BEARER|bearer)\s+([A-Za-z0-9._~+/=-]{16,})"),
]


def _captured(text: str) -> Iterator[str]:
    """The secret parts of one string: its URLs' secrets, Authorization values, ``name=value`` values."""
    if "://" in text:
        yield from (text[s.start:s.end] for s in url_secrets(text, secret_name=secret_key))
    for pattern in _CAPTURE:
        for match in pattern.finditer(text):
            yield match.group(1)
            try:
                decoded = base64.b64decode(match.group(1), validate=True).decode("utf-8")
            except (binascii.Error, ValueError):
                continue
            if ":" in decoded:
                yield decoded.split(":", 1)[1]
    for match in _ASSIGNMENT.finditer(text):
        if secret_key(match.group(1)) and match.group(3).lower() not in _SCHEMES:
            yield match.group(3)


def secret_values(data: Any) -> list[str]:
    """The secret values a JSON-like structure holds: the scalars under keys naming a secret, URL passwords,
    token-shaped URL user names and secret query values, Authorization values and Basic credentials (with the
    password they encode), ``name=value`` values. ``register`` them and ``redact`` replaces them wherever they turn
    up, in any shape (an engine's error quoting its token)."""
    found: set[str] = set()

    def visit(value: Any, secret: bool) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                visit(v, secret or secret_key(k))
        elif isinstance(value, (list, tuple)):
            for v in value:
                visit(v, secret)
        elif secret and _scalar_secret(value):
            found.add(str(value))
        elif isinstance(value, str):
            found.update(_captured(value))

    visit(data, False)
    return sorted(v for v in found if v != REDACTED)


def redact_exception(exc: BaseException) -> BaseException:
    """``exc`` with no secret in its text, for the state message Prefect stores (``str(exc)``): its string
    arguments are redacted in place (its type, traceback and attributes kept); one whose text still holds a secret
    after that (its ``__str__`` reads other attributes) gives way to a ``RedactedError`` carrying its redacted text,
    the original as its cause (tracebacks are logged, and log records are redacted)."""
    try:
        text = str(exc)
    except Exception:  # an exception that cannot say what it is: nothing of it to redact
        return exc
    if redact(text) == text:
        return exc
    exc.args = tuple(redact(a) if isinstance(a, str) else a for a in exc.args)
    try:
        text = str(exc)
    except Exception:
        text = ""
    if text and redact(text) == text:
        return exc
    replacement = RedactedError(f"{type(exc).__name__}: {redact(text)}")
    replacement.__cause__ = exc
    return replacement


class RedactedError(RuntimeError):
    """An exception whose text held a secret its arguments could not be cleared of; the message is redacted."""


def redact_optional(text: str | None) -> str | None:
    return None if text is None else redact(text)


class RedactFilter(logging.Filter):
    """Redacts a record in place (message with its args merged, and the exception text) and makes its control
    characters visible; never drops one."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: leave it for the handler to report
            return True
        record.msg, record.args = visible(redact(message)), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = visible(redact(record.exc_text))
        if record.stack_info:
            record.stack_info = visible(redact(record.stack_info))
        return True


_FILTER = RedactFilter()


def install(handlers: Iterable[logging.Handler] = ()) -> None:
    """Redact every log record of this process where it is made (a record factory wrapping the current
    one, once), so handlers added later (Prefect's, when a deployment runs the flow) are covered; also
    put ``RedactFilter`` on ``handlers`` and on the root logger's handlers."""
    factory = logging.getLogRecordFactory()
    if not getattr(factory, "_dialogbench_redacts", False):
        def redacting_factory(*args, **kwargs) -> logging.LogRecord:
            record = factory(*args, **kwargs)
            _FILTER.filter(record)
            return record

        redacting_factory._dialogbench_redacts = True  # type: ignore[attr-defined]
        logging.setLogRecordFactory(redacting_factory)
    for handler in [*logging.getLogger().handlers, *handlers]:
        if _FILTER not in handler.filters:
            handler.addFilter(_FILTER)
