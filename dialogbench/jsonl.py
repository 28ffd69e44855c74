"""Reading a vendored dataset: every bad line reported at once, with its file and line number (at read time
and, through ``data_problems``, before a run starts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Iterator


class DatasetError(ValueError):
    """A malformed dataset row; the message names the file, line and row id."""


def records(path: str | Path, problems: list[str]) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line; lines that are not a JSON object go to ``problems``."""
    for line_no, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{path}:{line_no}: not valid JSON ({exc.msg})")
            continue
        if not isinstance(record, dict):
            problems.append(f"{path}:{line_no}: expected a JSON object, got {type(record).__name__}")
            continue
        yield line_no, record


def raise_if_any(problems: list[str], *, path: str | Path, what: str) -> None:
    """One DatasetError listing (the first 20 of) ``problems``, so a bad file is fixed in one pass."""
    if problems:
        shown = "\n  ".join(problems[:20]) + (f"\n  … and {len(problems) - 20} more" if len(problems) > 20 else "")
        raise DatasetError(f"{len(problems)} malformed {what} in {path}:\n  {shown}")


_CHECKED: dict[tuple, tuple[str, ...]] = {}  # (reader, path, mtime, size) → problems: preflight runs twice per run


def data_problems(field: str, read: Callable[[str | Path], object], path: str | Path) -> list[str]:
    """Read ``path`` with ``read`` (the reader the family's stage uses) and return what is wrong with it,
    each line prefixed with the config ``field`` ("botchat.dataset: …"); empty when it reads cleanly.
    A file is read once per version: the CLI's preflight and the flow's own (a deployment) share it."""
    try:
        stat = Path(path).stat()
    except OSError as exc:
        return [f"{field}: cannot read {path} ({exc.strerror or exc})"]
    key = (getattr(read, "__module__", ""), getattr(read, "__qualname__", repr(read)), str(path),
           stat.st_mtime_ns, stat.st_size)
    if key not in _CHECKED:
        try:
            read(path)
            found: tuple[str, ...] = ()
        except DatasetError as exc:  # already names the file and every bad line
            found = (str(exc),)
        except (OSError, UnicodeDecodeError, ValueError) as exc:  # json.JSONDecodeError is a ValueError
            found = (str(exc) if str(path) in str(exc) else f"{path}: {exc}",)
        _CHECKED[key] = found
    return [f"{field}: {problem}" for problem in _CHECKED[key]]
