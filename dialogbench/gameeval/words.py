"""The vendored GameEval word lists: the 100 Ask-Guess words and the 11 SpyFall (spy, common) pairs.
A bad file is reported whole (every problem, with its file and line) before any game is played."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from dialogbench.text.jsonl import lines, raise_if_any, read_json


@dataclass(frozen=True)
class WordPair:
    spy: str      # appendix B: the first word of a pair is the spy word
    common: str

    @property
    def item(self) -> str:
        return f"{self.spy},{self.common}"


def read_words(path: str | Path) -> list[str]:
    """A JSON list of distinct non-empty strings (CIFAR-100 labels, underscores kept: ``aquarium_fish``), read
    within ``jsonl.LIMITS``."""
    words = read_json(path)
    if not isinstance(words, list):
        raise_if_any([f"{path}: expected a JSON list of words, got {type(words).__name__}"], path=path, what="word lists")
    problems, seen = [], set()
    for i, word in enumerate(words):
        if not isinstance(word, str) or not word.strip():
            problems.append(f"{path}: entry [{i}]: expected a non-empty string, got {word!r}")
        elif word in seen:
            problems.append(f"{path}: entry [{i}]: duplicate word {word!r}")
        else:
            seen.add(word)
    raise_if_any(problems, path=path, what="words")
    return words


def read_pairs(path: str | Path) -> list[WordPair]:
    """``spy_word,common_word`` a line (blank lines skipped; lines read within ``jsonl.LIMITS``); the two words
    must differ."""
    problems, pairs = [], []
    for line_no, line in lines(path, problems):
        if not line.strip():
            continue
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 2 or not all(parts):
            problems.append(f"{path}:{line_no}: expected 'spy_word,common_word', got {line!r}")
        elif parts[0].lower() == parts[1].lower():
            problems.append(f"{path}:{line_no}: the spy word and the common word are the same ({parts[0]!r})")
        else:
            pairs.append(WordPair(*parts))
    raise_if_any(problems, path=path, what="word pairs")
    return pairs


def spoken(word: str) -> str:
    """How a label is said: ``aquarium_fish`` → ``aquarium fish``."""
    return word.replace("_", " ")


def word_pattern(word: str) -> re.Pattern:
    """A whole-word, case-insensitive match of ``word`` with its underscores, hyphens and spaces read alike and a
    plural s/es allowed ("aquarium_fish" matches "Aquarium fishes"): how both games tell a word said."""
    parts = [re.escape(p) for p in re.split(r"[\s_-]+", word.strip()) if p]
    return re.compile(r"\b" + r"[\s_-]+".join(parts) + r"(?:e?s)?\b", re.I)
