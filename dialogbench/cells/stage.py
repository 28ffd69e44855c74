"""What a stage of a family declares: its output table, how it plans its cells, how it computes some."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dialogbench.run import stopping
from dialogbench.cells.cell import Cell
from dialogbench.cells.records import write_failures
from dialogbench.cells.tables import Table
from dialogbench.lake import Lake
from dialogbench.text.redact import redact

if TYPE_CHECKING:
    from dialogbench.run.config import Config, ModelConfig

log = logging.getLogger("dialogbench.stage")


@dataclass
class Planned:
    """A stage's plan: every cell the config asks for, and what the report should say about it.
    ``todo`` is set only by stages whose missing cells are not an anti-join on the table's key. Cells the config asks
    for that cannot be computed this run because an input they need is missing (the answer or dialogue they judge
    failed or is not there yet) are neither cached nor computed: the stage reports them as blocked. ``blocked``
    counts those among ``cells`` (keyed, left out of ``todo``: MT-Bench-101 turns without an answer), ``unplanned``
    those that cannot even be keyed yet and so are not in ``cells`` (UniEval or Arena cells of a missing dialogue:
    the key covers the dialogue's)."""

    cells: list[Cell]
    detail: dict = field(default_factory=dict)
    todo: list[Cell] | None = None
    blocked: int = 0
    unplanned: int = 0


@dataclass
class Emit:
    """Where a stage's compute sends its results: rows go to the stage's table and failures to
    ``failures`` at once (so a killed run keeps them), counted for the stage report."""

    lake: Lake
    stage: str
    table: Table | None
    run_id: str
    computed: int = 0
    failed: int = 0
    detail: dict = field(default_factory=dict)
    first_error: str | None = None
    after: list["ModelConfig"] = field(default_factory=list)  # the later stages' models: kept by a stage releasing midway
    tallied: int = 0  # of ``computed``, what the run's progress has counted (what a stopped run says it kept)

    def tally(self) -> None:
        """Count the cells computed since the last tally in the run's progress (a stage that writes its rows itself
        sets ``computed``; the runner tallies once more when the chunk ends)."""
        if self.computed != self.tallied:
            stopping.progress.written(self.stage, self.computed - self.tallied)
            self.tallied = self.computed

    def __call__(self, rows: list[dict], failures: list[tuple[Cell, str, str | None]] = (), *,
                 computed: int | None = None, failed: int | None = None) -> None:
        """Write ``rows`` and ``failures`` ((cell, error, failing model or None)). By default every row
        is a computed cell and every distinct failed cell a failure; a stage that writes rows for
        failed cells (an abandoned game) passes the counts. Once a stopped run escalates (it exits within
        seconds), nothing more is written: ``Stopped``."""
        if stopping.escalating():
            raise stopping.Stopped()
        if rows:
            self.table.write(self.lake, rows)
        if failures:
            write_failures(self.lake, stage=self.stage, failed=list(failures), run_id=self.run_id)
            if self.first_error is None:  # the stage's record step warns once, with the first error
                self.first_error = redact(failures[0][1] or "no text")
            log.debug("%s: %d cell(s) failed, first: %s", self.stage, len(failures), failures[0][1])
        self.computed += len(rows) if computed is None else computed
        self.tally()
        self.failed += len({c.key for c, _, _ in failures}) if failed is None else failed


class Stage:
    """One stage of a family. Subclasses set ``name`` and ``table`` and implement ``plan`` and ``compute``;
    the runner (``dialogbench.cells.runner``) does the rest the same way for every family."""

    name: str
    table: Table | None = None
    chunk_size: int | None = None   # None: all missing cells in one chunk
    records_plan: bool = True        # derived tables (lengths, ratings) record none
    plan_per_models: bool = True     # the latest plan is per cell models (False: per stage)
    retries: int = 1                 # orchestrator retries of a failed chunk (judges are often remote)
    role: str = "chatbot"            # what its models are to `usage`: chatbot, judge or player
    # a judge stage that may run on the inputs there so far and again later in the same run (judging while a
    # dispatched run's units still generate, dialogbench/dispatch/units.py); False for one that must see them all once
    judges_inputs_so_far: bool = True
    # the stage its plans, rows and failures are recorded as, when not ``name`` (an agreement judge's copy of a judge
    # stage, ``JudgeStage.agreement``: named apart for the run, recorded as its protocol with its own judge)
    recorded_as: str | None = None
    plan_file: str = "plan.parquet"  # its plan's file in the run's partition of ``plans``

    @property
    def lake_name(self) -> str:
        """The stage's name in the tables of its cells (``plans``, ``failures``, its rows' protocol); ``runs`` and
        ``backend_calls`` (what each stage of a run did and cost) name it ``name``."""
        return self.recorded_as or self.name

    def models(self, config: "Config") -> list["ModelConfig"]:
        """The models the stage calls (the pool keeps exactly what the rest of the run needs)."""
        return []

    def tokens_per_cell(self, config: "Config") -> int:
        """The tokens computing one of its cells generates at most (``dialogbench plan``); 0 for a stage that calls
        no model."""
        return 0

    def typical_tokens_per_cell(self, config: "Config") -> float | None:
        """The tokens computing one of its cells generates on average by the protocol's own lengths (its dataset's
        replies, each capped at the stage's most tokens): ``dialogbench plan``'s estimate before the lake has a
        history of the stage; None when the protocol gives no such length (the bound is used)."""
        return None

    def splits(self, config: "Config") -> bool:
        """Whether a model's cells of this stage are independent of each other, so that ``dispatch.shards`` may compute
        them in parts at once (``cells.runner.of_shard``); False by default."""
        return False

    def model_groups(self, config: "Config") -> list[list["ModelConfig"]]:
        """The models it loads at the same time, in the order it loads them: all of them at once by default (a
        stage that releases engines midway, as GameEval's, says which groups)."""
        return [models] if (models := self.models(config)) else []

    def plan(self, config: "Config", lake: Lake) -> Planned:
        raise NotImplementedError

    def compute(self, config: "Config", cells: list[Cell], emit: Emit) -> None:
        raise NotImplementedError

    def repeatable(self, config: "Config", lake: Lake) -> list[Cell]:
        """The planned cells that ``compute`` can compute again, with their payloads (what the judge canary
        repeats); by default the plan's cells, for stages whose plan carries every cell's payload."""
        return self.plan(config, lake).cells

