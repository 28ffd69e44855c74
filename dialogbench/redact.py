"""Secrets out of everything dialogbench writes: error texts, logs, run summaries, the lake.

An endpoint's error can quote the API key it was sent (vLLM's 401 body says ``got 'sk-…', expected
'sk-…'``), and error texts are stored word for word. So every text that is written goes through
``redact`` first: the values of the configured keys (each model's ``api_key_env``, read at call time,
so a key exported after the config was loaded is still caught) and common key shapes are replaced
by ``[REDACTED]``. Log records are redacted where they are made (``install``), so every handler,
Prefect's console and API handlers included, only ever sees redacted text; the same filter makes their control
characters visible (``textsafe``), since a log line quoting model output (a failed cell's first error) is printed
to a terminal.
"""

from __future__ import annotations

import logging
import os
import re
from typing import TYPE_CHECKING, Iterable

from dialogbench.textsafe import visible

if TYPE_CHECKING:
    from dialogbench.config import Config

REDACTED = "[REDACTED]"
MIN_SECRET = 8  # shorter configured values ("EMPTY", "1") would mangle ordinary text and protect nothing

# Environment variables whose values are secrets: every ModelConfig's api_key_env registers itself
# (dialogbench.config), plus the usual names of hosted-API keys.
_ENV_NAMES: set[str] = {"DIALOGBENCH_OPENAI_API_KEY", "OPENAI_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}
_VALUES: set[str] = set()  # literal secrets registered directly (``register``)

_B = r"(?<![A-Za-z0-9_-])"  # start of a token: no key starts inside a word ("task-1", "risk-free")
_PATTERNS = [
    # (regex, replacement): the key shapes of common providers, then "Bearer …" and key=value assignments.
    (re.compile(_B + r"sk-[A-Za-z0-9_-]{16,}"), REDACTED),                      # OpenAI, sk-proj-…, sk-ant-…
    (re.compile(_B + r"hf_[A-Za-z0-9]{20,}"), REDACTED),                        # Hugging Face
    (re.compile(_B + r"(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z])"), REDACTED),   # AWS access key id
    (re.compile(_B + r"AIza[0-9A-Za-z_-]{35}"), REDACTED),                      # Google API key
    (re.compile(_B + r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})"), REDACTED),  # GitHub
    (re.compile(_B + r"xox[abposr]-[A-Za-z0-9-]{10,}"), REDACTED),              # Slack
    (re.compile(r"(\b(?:Bearer|BEARER|bearer)\s+)(?=[^\s]*[0-9])[A-Za-z0-9._~+/=-]{16,}"), r"\1" + REDACTED),  # a token has digits
    (re.compile(r"(?i)(\b(?:api[_-]?key|apikey|api[_-]?token|access[_-]?token|auth[_-]?token|secret[_-]?key"
                r"|client[_-]?secret|password|passwd)[\"']?\s*[=:]\s*[\"']?)[^\s\"',;&}]{6,}"), r"\1" + REDACTED),
]


def watch_env(*names: str) -> None:
    """Treat the values of these environment variables as secrets (read at each ``redact``)."""
    _ENV_NAMES.update(n for n in names if n)


def register(*values: str | None) -> None:
    """Treat these literal values as secrets (a key passed in code rather than through the environment)."""
    _VALUES.update(v for v in values if v and len(v) >= MIN_SECRET)


def secrets_from(config: "Config") -> list[str]:
    """The configured keys' values: each model's and judge's ``api_key_env``, read now (and watched)."""
    names = [m.api_key_env for m in [*config.models, *config.judges]]
    watch_env(*names)
    return [v for v in (os.environ.get(n) for n in names) if v and len(v) >= MIN_SECRET]


def _known_values() -> list[str]:
    values = set(_VALUES)
    values.update(v for v in (os.environ.get(n) for n in _ENV_NAMES) if v and len(v) >= MIN_SECRET)
    return sorted(values, key=len, reverse=True)  # a longer secret first, in case one contains another


def redact(text: str) -> str:
    """``text`` with every configured key value and every key-shaped token replaced by ``[REDACTED]``."""
    if not text:
        return text
    for value in _known_values():
        text = text.replace(value, REDACTED)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


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
