"""Pairwise comparisons ("games") between models, as numpy arrays, read from CSV or Parquet.

A game is ``(a, b, score)``: ``a`` and ``b`` index ``Games.models`` and ``score`` is the result for
``a`` -- 1.0 when ``a`` won, 0.0 when ``b`` won, 0.5 for a tie. Verdicts that could not be parsed
must be dropped upstream: a null/empty winner is an error here, never a silent tie.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

REQUIRED_COLUMNS = ("model_a", "model_b", "winner")
_KEYWORDS = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5}


class ComparisonsError(ValueError):
    """Bad comparison data; the message names the file (when there is one), row and column."""


@dataclass(frozen=True)
class Games:
    a: np.ndarray          # int64 (n,), index into ``models``
    b: np.ndarray          # int64 (n,)
    score: np.ndarray      # float64 (n,), result for ``a``: 1 win, 0 loss, 0.5 tie
    models: list[str]

    def __post_init__(self) -> None:
        n = len(self.a)
        if not (len(self.b) == len(self.score) == n):
            raise ValueError(f"a, b and score must have the same length ({n}, {len(self.b)}, {len(self.score)})")

    def __len__(self) -> int:
        return int(self.a.shape[0])

    @property
    def n_models(self) -> int:
        return len(self.models)

    def games_per_model(self) -> np.ndarray:
        """How many games each model played (aligned with ``models``)."""
        m = self.n_models
        return np.bincount(self.a, minlength=m) + np.bincount(self.b, minlength=m)

    def subset(self, index: np.ndarray) -> "Games":
        """The games at ``index`` (any integer index array, repeats allowed), same model list."""
        return Games(self.a[index], self.b[index], self.score[index], self.models)

    @classmethod
    def from_arrays(cls, a: Sequence[int], b: Sequence[int], score: Sequence[float],
                    models: Sequence[str]) -> "Games":
        """From integer indices and scores (validated: indices in range, a != b, score in {0, .5, 1})."""
        a_arr = np.ascontiguousarray(a, dtype=np.int64)
        b_arr = np.ascontiguousarray(b, dtype=np.int64)
        s_arr = np.ascontiguousarray(score, dtype=np.float64)
        m = len(models)
        for name, arr in (("a", a_arr), ("b", b_arr)):
            bad = np.flatnonzero((arr < 0) | (arr >= m))
            if bad.size:
                raise ValueError(f"row {bad[0]}: {name}={arr[bad[0]]} is not a model index (0..{m - 1})")
        same = np.flatnonzero(a_arr == b_arr)
        if same.size:
            raise ValueError(f"row {same[0]}: a model cannot play itself ({models[a_arr[same[0]]]!r})")
        bad = np.flatnonzero(~np.isin(s_arr, (0.0, 0.5, 1.0)))
        if bad.size:
            raise ValueError(f"row {bad[0]}: score {s_arr[bad[0]]!r} is not 0, 0.5 or 1")
        return cls(a_arr, b_arr, s_arr, list(models))

    @classmethod
    def from_records(cls, model_a: Iterable, model_b: Iterable, winner: Iterable, *,
                     models: Sequence[str] | None = None, source: str | None = None) -> "Games":
        """Games from three parallel columns.

        ``winner`` is ``"model_a"``, ``"model_b"`` or ``"tie"`` (case-insensitive, surrounding space
        ignored), or the winning model's own name. ``models`` fixes the model list and order
        (default: the sorted distinct names). Raises :class:`ComparisonsError` (a ``ValueError``)
        naming ``source`` (a file, if given), the 0-based data row, the column and the bad value.
        """
        col_a, col_b, col_w = list(model_a), list(model_b), list(winner)
        if not (len(col_a) == len(col_b) == len(col_w)):
            raise ComparisonsError(f"{_where(source)}columns have different lengths "
                                   f"(model_a {len(col_a)}, model_b {len(col_b)}, winner {len(col_w)})")
        for column, values in (("model_a", col_a), ("model_b", col_b)):
            for row, value in enumerate(values):
                if value is None or not isinstance(value, str) or not value.strip():
                    raise ComparisonsError(f"{_where(source)}row {row}, column {column!r}: "
                                           f"missing or empty model name ({value!r})")
        names_a = [v.strip() for v in col_a]
        names_b = [v.strip() for v in col_b]
        if models is None:
            models = sorted(set(names_a) | set(names_b))
        index = {name: i for i, name in enumerate(models)}
        n = len(col_w)
        a = np.empty(n, dtype=np.int64)
        b = np.empty(n, dtype=np.int64)
        score = np.empty(n, dtype=np.float64)
        for row in range(n):
            na, nb = names_a[row], names_b[row]
            for column, name in (("model_a", na), ("model_b", nb)):
                if name not in index:
                    raise ComparisonsError(f"{_where(source)}row {row}, column {column!r}: "
                                           f"unknown model {name!r}")
            if na == nb:
                raise ComparisonsError(f"{_where(source)}row {row}, columns 'model_a'/'model_b': "
                                       f"a model cannot play itself ({na!r})")
            a[row], b[row] = index[na], index[nb]
            score[row] = _parse_winner(col_w[row], na, nb, row, source)
        return cls(a, b, score, list(models))


def _where(source: str | None) -> str:
    return f"{source}: " if source else ""


def _parse_winner(value, name_a: str, name_b: str, row: int, source: str | None) -> float:
    if value is None or (isinstance(value, float) and np.isnan(value)) or \
            (isinstance(value, str) and not value.strip()):
        raise ComparisonsError(f"{_where(source)}row {row}, column 'winner': missing verdict ({value!r}); "
                               "drop unparseable verdicts upstream instead of counting them as ties")
    if isinstance(value, str):
        text = value.strip()
        keyword = _KEYWORDS.get(text.lower())
        if keyword is not None:
            return keyword
        if text == name_a:
            return 1.0
        if text == name_b:
            return 0.0
    raise ComparisonsError(f"{_where(source)}row {row}, column 'winner': {value!r} is not one of "
                           f"'model_a', 'model_b', 'tie', {name_a!r}, {name_b!r}")


def read_comparisons(path: str | os.PathLike, *, models: Sequence[str] | None = None) -> Games:
    """Read ``model_a, model_b, winner`` columns from a ``.csv`` or ``.parquet`` file (other columns
    are ignored). Errors (missing file or columns, bad rows) name the file, 0-based data row and column."""
    import polars as pl

    p = Path(path)
    if not p.exists():
        raise ComparisonsError(f"{p}: no such file")
    suffix = p.suffix.lower()
    try:
        if suffix == ".csv":
            # Everything as strings: a winner column must never be coerced to numbers or nulls.
            frame = pl.read_csv(p, infer_schema=False)
        elif suffix in (".parquet", ".pq"):
            frame = pl.read_parquet(p)
        else:
            raise ComparisonsError(f"{p}: unsupported file type {suffix!r} (expected .csv or .parquet)")
    except ComparisonsError:
        raise
    except Exception as exc:  # polars raises several exception types for unreadable files
        raise ComparisonsError(f"{p}: cannot read: {exc}") from exc
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise ComparisonsError(f"{p}: missing column(s) {', '.join(repr(c) for c in missing)} "
                               f"(found {frame.columns})")
    for column in REQUIRED_COLUMNS:
        if isinstance(frame.schema[column], (pl.Categorical, pl.Enum)):
            frame = frame.with_columns(pl.col(column).cast(pl.String))
        if frame.schema[column] != pl.String:
            raise ComparisonsError(f"{p}: column {column!r} must hold strings, not {frame.schema[column]}")
    if frame.height == 0:
        raise ComparisonsError(f"{p}: no comparisons (the file has its columns but no rows): nothing to rate")
    return Games.from_records(frame["model_a"].to_list(), frame["model_b"].to_list(),
                              frame["winner"].to_list(), models=models, source=str(p))


def win_rates(games: Games, *, ordered: bool = False):
    """Per-pair counts as a polars DataFrame with columns ``model_a, model_b, games, wins_a, wins_b,
    ties, win_rate, tie_rate`` (rates of ``model_a``, as fractions of ``games``).

    ``ordered=False`` (default) merges both seatings of a pair: ``model_a`` is the model earlier in
    ``games.models``. ``ordered=True`` keeps the seating as recorded (``model_a`` is the one in the
    ``model_a`` column), so a position bias shows up. Pairs that never met are omitted.
    """
    import polars as pl

    m = games.n_models
    a, b, s = games.a, games.b, games.score
    if not ordered:
        swap = a > b
        a, b = np.where(swap, b, a), np.where(swap, a, b)
        s = np.where(swap, 1.0 - s, s)
    code = a * m + b
    total = np.bincount(code, minlength=m * m)
    wins_a = np.bincount(code, weights=(s == 1.0), minlength=m * m)
    wins_b = np.bincount(code, weights=(s == 0.0), minlength=m * m)
    ties = np.bincount(code, weights=(s == 0.5), minlength=m * m)
    cells = np.flatnonzero(total)
    n = total[cells]
    return pl.DataFrame({
        "model_a": [games.models[c // m] for c in cells],
        "model_b": [games.models[c % m] for c in cells],
        "games": n.astype(np.int64),
        "wins_a": wins_a[cells].astype(np.int64),
        "wins_b": wins_b[cells].astype(np.int64),
        "ties": ties[cells].astype(np.int64),
        "win_rate": wins_a[cells] / n,
        "tie_rate": ties[cells] / n,
    }, schema={"model_a": pl.String, "model_b": pl.String, "games": pl.Int64, "wins_a": pl.Int64,
               "wins_b": pl.Int64, "ties": pl.Int64, "win_rate": pl.Float64, "tie_rate": pl.Float64})
