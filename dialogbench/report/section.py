"""What a family gives the report (``Family.report``): the views it reads, what it derives from their rows,
and the sections it shows. ``html`` and ``markdown`` render the sections; ``data`` and ``build`` call these."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from dialogbench.report.tables import Section

Rows = list[dict] | None  # a query's rows (sorted by its SQL); None when its view does not exist


class Read(Protocol):
    def __call__(self, sql: str, params: Sequence = ()) -> Rows: ...


@dataclass(frozen=True)
class Context:
    """What ``ReportSection.derive`` gets beside its rows: ``read`` runs further SQL over the catalog (with
    parameters), ``judge`` is the report's judge, ``examples_per_model`` how many examples to show per model,
    ``min_cells`` the fewest cells (dialogues, games, comparisons) a number may rest on unmarked (``report.min_cells``
    of the config), ``not_measured`` the (judge, protocol) pairs whose judge failed a judge check, with the finding
    (dialogbench/judge_checks: their numbers are shown as not measured, with the share and why), ``identities`` the
    models and judges of the board's latest run's config by name (``judge_checks.self_judging``: which candidates
    are their judge under another name)."""

    read: Read
    judge: str | None
    examples_per_model: int
    min_cells: int = 10
    judge_checks: Any = None       # the judge checks' settings of the run (None: the board's latest run's)
    not_measured: Mapping[tuple[str, str], Any] = field(default_factory=dict)  # (judge, protocol) -> its finding
    identities: Mapping[str, tuple] = field(default_factory=dict)  # model name -> self_judging.identity

    def self_judged(self, models, judge: str | None) -> set[str]:
        """The ``models`` that ``judge`` rated as itself (``judge_checks.self_judging.same_model``)."""
        from dialogbench.judge_checks.self_judging import same_model

        return {m for m in models if same_model(m, judge, self.identities)}


def keep_rows(rows: dict[str, Rows], context: Context) -> dict:
    return rows


@dataclass(frozen=True, kw_only=True)
class ReportSection:
    """``queries`` (name -> SQL over the catalog's views) are read into a dict of rows. The report's judge is
    the one with the most rows across every family's ``judged`` queries (each has a ``judge`` column), whose
    rows are then cut to that judge. ``derive(rows, context)`` returns the family's data (the rows and what it
    computes from them or reads with parameters); ``sections(data)`` the family's sections, in page order."""

    queries: Mapping[str, str]
    sections: Callable[[dict], list[Section]]
    judged: tuple[str, ...] = ()
    derive: Callable[[dict[str, Rows], Context], dict] = keep_rows

    def __post_init__(self) -> None:
        if unknown := sorted(set(self.judged) - set(self.queries)):
            raise ValueError(f"judged names no query: {', '.join(unknown)}")
