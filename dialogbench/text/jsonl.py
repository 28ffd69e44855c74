"""Reading a dataset file: within bounds, and every bad line reported at once, with its file and line number (at
read time and, through ``data_problems``, before a run starts).

Bounds: a line, a JSON value or a file cannot make the reader allocate without limit. A JSONL file is read a line at
a time, and a line no further than its bound (the rest of a longer one is skipped in small pieces, only to measure
it), so a 10 GB line costs 1 MB of memory. Before ``json.loads`` sees a line, its shape is measured on the text
(strings set aside, then brackets and commas counted): nesting deeper than ``depth`` would exhaust Python's JSON
decoder, which recurses, and more than ``values`` values would build an object far larger than the line.
``configs/README.md`` ("Limits") lists the bounds."""

from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass
from itertools import count
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

from dialogbench.text.yamlbounds import megabytes


class DatasetError(ValueError):
    """A malformed dataset row, or a file over its bound; the message names the file, line and row id."""


@dataclass(frozen=True)
class DataLimits:
    """Generous for the vendored data (MT-Bench-101: 1.9 MB, lines up to 5.2 kB, 3 levels, 25 values a line;
    the MuTual seeds: 0.2 MB, lines up to 1.4 kB; the UniEval examples 5 kB; the word lists 1 kB)."""

    file_bytes: int = 64_000_000     # a dataset file (a JSONL file, a word-pair list)
    line_bytes: int = 1_000_000      # a line of one; and a whole-file JSON document (the examples, the word list)
    depth: int = 32                  # nesting of JSON arrays and objects
    values: int = 100_000            # JSON values (each scalar, array and object) in a line or document


LIMITS = DataLimits()


_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)  # a JSON string (unrolled: linear, no backtracking)
_SHAPE = re.compile(r"[\[\]{},]")


def json_problem(text: str, limits: DataLimits = LIMITS) -> tuple[int, str] | None:
    """(1-based line within ``text``, what is wrong) when ``text`` nests deeper than ``limits.depth`` or holds
    more than ``limits.values`` values; None when it is within both (whether it is valid JSON is ``json.loads``'s
    to say). Linear in ``text``, and stops at the first bound crossed."""
    bare = _STRING.sub('""', text)  # a string holds no bracket; a valid one holds no newline, so lines still count
    depth, values = 0, 1
    for match in _SHAPE.finditer(bare):
        char = match.group()
        if char in "[{":
            depth += 1
            values += 1
            if depth > limits.depth:
                return bare.count("\n", 0, match.start()) + 1, f"JSON nested deeper than {limits.depth} levels"
        elif char == ",":
            values += 1
        else:
            depth -= 1
        if values > limits.values:
            return bare.count("\n", 0, match.start()) + 1, f"more than {limits.values:,} JSON values"
    return None


def loads(text: str, path: str | Path, line: int | None = None, limits: DataLimits = LIMITS) -> Any:
    """``json.loads(text)`` once ``text`` is within ``limits``; else a DatasetError ``<path>:<line>: what``
    (``line``: the line ``text`` is in a JSONL file, else the line within ``text``). ``json.JSONDecodeError``
    passes through."""
    found = json_problem(text, limits)
    if found:
        raise DatasetError(f"{path}:{line or found[0]}: {found[1]}")
    try:
        return json.loads(text)
    except RecursionError:  # the depth bound stops this first; kept so that a lower recursion limit cannot crash
        raise DatasetError(f"{path}:{line or 1}: JSON nested too deep to read") from None


def lines(path: str | Path, problems: list[str], limits: DataLimits = LIMITS) -> Iterator[tuple[int, str]]:
    """(line number, text without its line end) of each line of ``path``. A line over ``limits.line_bytes`` or
    not UTF-8 goes to ``problems`` (its file, line and size) and is skipped; a file over ``limits.file_bytes``
    raises ``DatasetError`` before anything is read (or once reading passes the bound, for a file whose size
    the file system does not say)."""
    size = Path(path).stat().st_size
    if size > limits.file_bytes:
        raise DatasetError(f"{path}: a file of {megabytes(size)}, over the {megabytes(limits.file_bytes)} "
                           "limit for a dataset file")
    read = 0
    with open(path, "rb") as handle:
        for line_no in count(1):
            chunk = handle.readline(limits.line_bytes + 1)
            if not chunk:
                return
            read += len(chunk)
            length = len(chunk) - chunk.endswith(b"\n")
            if length > limits.line_bytes:  # over the bound: measure the rest, 64 kB at a time, keeping none of it
                while not chunk.endswith(b"\n") and read <= limits.file_bytes:
                    chunk = handle.readline(1 << 16)
                    if not chunk:
                        break
                    read += len(chunk)
                    length += len(chunk) - chunk.endswith(b"\n")
            if read > limits.file_bytes:
                raise DatasetError(f"{path}: more than {megabytes(limits.file_bytes)}, the limit for a "
                                   "dataset file")
            if length > limits.line_bytes:
                problems.append(f"{path}:{line_no}: line of {megabytes(length)}, over the "
                                f"{megabytes(limits.line_bytes)} limit")
                continue
            try:
                text = chunk.decode("utf-8")
            except UnicodeDecodeError as exc:
                problems.append(f"{path}:{line_no}: not UTF-8 text (byte {exc.object[exc.start]:#04x})")
                continue
            yield line_no, text.removesuffix("\n").removesuffix("\r")


def read_json(path: str | Path, limits: DataLimits = LIMITS) -> Any:
    """A whole-file JSON document (the UniEval examples, the Ask-Guess words), read no further than
    ``limits.line_bytes`` and within ``json_problem``'s bounds. A DatasetError naming the file and line otherwise."""
    with open(path, "rb") as handle:
        data = handle.read(limits.line_bytes + 1)
    if len(data) > limits.line_bytes:
        raise DatasetError(f"{path}: over the {megabytes(limits.line_bytes)} limit for a JSON file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise DatasetError(f"{path}:{line}: not UTF-8 text (byte {exc.object[exc.start]:#04x})") from None
    try:
        return loads(text, path, limits=limits)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None


def records(path: str | Path, problems: list[str]) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line, read within ``LIMITS``; lines that are not a JSON object, or
    cross a bound, go to ``problems``."""
    for line_no, line in lines(path, problems):
        if not line.strip():
            continue
        try:
            record = loads(line, path, line_no)
        except json.JSONDecodeError as exc:
            problems.append(f"{path}:{line_no}: not valid JSON ({exc.msg})")
            continue
        except DatasetError as exc:  # over a bound: the message names the file and line
            problems.append(str(exc))
            continue
        if not isinstance(record, dict):
            problems.append(f"{path}:{line_no}: expected a JSON object, got {type(record).__name__}")
            continue
        yield line_no, record


def raise_if_any(problems: list[str], *, path: str | Path, what: str) -> None:
    """One DatasetError listing (the first 20 of) ``problems``, so a bad file is fixed in one pass; a single
    problem is its own one line (each names its file and line)."""
    if len(problems) == 1:
        raise DatasetError(problems[0])
    if problems:
        shown = "\n  ".join(problems[:20]) + (f"\n  … and {len(problems) - 20} more" if len(problems) > 20 else "")
        raise DatasetError(f"{len(problems)} malformed {what} in {path}:\n  {shown}")


T = TypeVar("T")


def file_version(path: str | Path) -> tuple[int, int, int, int]:
    """What tells one version of a file from another: device, inode, size, modification time (ns). Raises
    ``OSError`` for a file that cannot be stat'ed."""
    stat = os.stat(path)
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns


def once_per_version(read: Callable[[str | Path], T]) -> Callable[[str | Path], T]:
    """``read`` (a dataset reader: a pure function of the file's content) kept per file version: a second call on a
    file with the same device, inode, size and modification time (ns) returns the first call's result, so the stages
    and probes a run builds many times (a dozen plans, each building every family's stages) parse a dataset once. A
    changed file is read again; a file that cannot be stat'ed, or reads with an error, is never kept. The last 8
    versions are kept; ``read`` must return what its callers do not change (a tuple, an Arrow table)."""
    kept = functools.lru_cache(maxsize=8)(lambda path, version: read(path))

    @functools.wraps(read)
    def cached(path: str | Path) -> T:
        try:
            version = file_version(path)
        except OSError:
            return read(path)  # it raises as it always did
        return kept(str(path), version)

    return cached


_CHECKED: dict[tuple, tuple[str, ...]] = {}  # (reader, path, file version) → problems: preflight runs twice per run


def data_problems(field: str, read: Callable[[str | Path], object], path: str | Path) -> list[str]:
    """Read ``path`` with ``read`` (the reader the family's stage uses) and return what is wrong with it,
    each line prefixed with the config ``field`` ("botchat.dataset: …"); empty when it reads cleanly.
    A file is read once per version: the CLI's preflight and the flow's own (a deployment) share it."""
    try:
        version = file_version(path)
    except OSError as exc:
        return [f"{field}: cannot read {path} ({exc.strerror or exc})"]
    key = (getattr(read, "__module__", ""), getattr(read, "__qualname__", repr(read)), str(path), version)
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
