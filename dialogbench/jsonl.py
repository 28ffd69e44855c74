"""Reading a vendored JSONL dataset: every bad line reported at once, with its file and line number."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator


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
