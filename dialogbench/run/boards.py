"""Boards: the named leaderboards a run publishes to. Cells are shared through the cache; what a board owns is which
plans are current, its metric history and its reports. A run publishes to its config's board (``board:`` in the
config, else the config file's stem: ``configs/nightly.yaml`` -> ``nightly``), unless ``--board NAME`` says
otherwise; a run with CLI overrides (``--limit``, ``--models``, ``--n``, ``--judge``) and no ``--board`` publishes to
its own board, the config's name with the overrides (``demo+limit=4+n=4,8``), so an ad-hoc run never moves the
nightly numbers. A board named by a person has no ``+``; one named from overrides always has: that is how the
lake tells ad-hoc boards apart (the default board of the readers is the latest run's board without ``+``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable

NAME = r"^[A-Za-z0-9][A-Za-z0-9._=,-]{0,99}$"  # a board a person names: no '+', no '/', at most 100 characters
ANY_NAME = r"^[A-Za-z0-9][A-Za-z0-9._=,+-]{0,399}$"  # a board a run may carry (named from overrides: '+')
ADHOC_MARK = "+"
OVERRIDE_FLAGS = ("model", "limit", "models", "n", "judge")  # the flags that name an ad-hoc board (config.apply_overrides)


def check_name(name: str, *, what: str, adhoc: bool = False) -> str:
    """``name`` if it is a board name a person may give (``adhoc``: or one named from overrides); else ValueError
    naming ``what`` (the flag or field)."""
    if not isinstance(name, str) or not re.fullmatch(ANY_NAME if adhoc else NAME, name):
        raise ValueError(f"{what}: {name!r} is not a board name (letters, digits and . _ = , -, starting with a "
                         "letter or digit, at most 100 characters; '+' marks boards named from CLI overrides)")
    return name


def _value(value: Any) -> str:
    return ",".join(str(v) for v in value) if isinstance(value, (list, tuple)) else str(value)


def _names(specs: list[str]) -> list[str]:
    """--model's specs by the names they give the models (an endpoint's URL is no part of a board's name)."""
    from dialogbench.run.model_spec import names

    return names(list(specs))


def run_board(*, config_path: str | Path, declared: str | None, overrides: dict[str, Any] | None) -> str:
    """The board a run publishes to: ``overrides["board"]``, else the config's board (``declared``, else the file's
    stem), followed by ``+flag=value`` for each CLI override given (in ``OVERRIDE_FLAGS`` order). Every source is held
    to ``check_name`` (it reaches Prefect's tags, the lake's rows and folder names): a name that fails is a
    ValueError naming where it came from."""
    overrides = overrides or {}
    if overrides.get("board"):
        return check_name(overrides["board"], what="--board")
    if declared:
        base = check_name(declared, what="board")
    else:  # a file's name is whatever the file system allows (ESC, BEL, spaces): held to the same rule
        base = check_name(Path(config_path).stem, what="board (the config file's name; set board: in the config, "
                          "or pass --board)")
    used = [(flag, _names(overrides[flag]) if flag == "model" else overrides[flag]) for flag in OVERRIDE_FLAGS
            if overrides.get(flag) is not None]
    board = base + "".join(f"{ADHOC_MARK}{flag}={_value(value)}" for flag, value in used)
    return check_name(board, what="board (named from the CLI overrides; pass --board)", adhoc=True)


def is_adhoc(board: str) -> bool:
    """A board named from CLI overrides (never the default board of the lake's readers)."""
    return ADHOC_MARK in board


def folder_name(board: str) -> str:
    """The board as one safe path component (its reports folder): letters, digits and ``._+=,-`` kept."""
    safe = "".join(c if c.isalnum() or c in "._+=,-" else "_" for c in board)
    return safe if safe not in ("", ".", "..") else "_"


def describe(boards: Iterable[str]) -> str:
    return ", ".join(sorted(boards)) or "none yet"
