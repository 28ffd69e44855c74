"""Run bookkeeping: a run id, per-stage counts (planned / cached / computed / failed), the runs table."""

from __future__ import annotations

import datetime as dt
import json
import logging
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

import pyarrow as pa

from dialogbench.lake import Lake
from dialogbench.lake.schemas import RUNS
from dialogbench.lake.store import safe_name
from dialogbench.text.redact import redact

log = logging.getLogger("dialogbench.runs")

if TYPE_CHECKING:
    from dialogbench.run.config import Config, FailOn


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def new_run_id() -> str:
    return now().strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:6]


@dataclass
class StageReport:
    """A stage's counts in a run. Every planned cell is cached (in the lake already), computed, failed (its
    backend call failed after retries: the next run retries it) or ``blocked`` (an input it needs is missing, e.g.
    the answer or dialogue it judges failed: it is computed once that input is)."""

    stage: str
    planned: int = 0
    cached: int = 0
    computed: int = 0
    failed: int = 0
    seconds: float = 0.0
    detail: dict = field(default_factory=dict)
    first_error: str | None = None  # the stage's first failed cell's error (redacted), for its warning
    blocked: int = 0

    def merge(self, other: "StageReport") -> "StageReport":
        """Add a chunk's counts (computed / failed / time, and numbers in ``detail``) to this stage's."""
        detail = dict(self.detail)
        for key, value in other.detail.items():
            both_numbers = isinstance(value, (int, float)) and isinstance(detail.get(key), (int, float))
            detail[key] = detail[key] + value if both_numbers else detail.get(key, value)
        return StageReport(self.stage, self.planned, self.cached, self.computed + other.computed,
                           self.failed + other.failed, self.seconds + other.seconds, detail,
                           self.first_error or other.first_error, self.blocked + other.blocked)

    @classmethod
    def from_row(cls, row: dict) -> "StageReport":
        """The report a ``runs`` row recorded."""
        return cls(row["stage"], row["planned"] or 0, row["cached"] or 0, row["computed"] or 0, row["failed"] or 0,
                   row["seconds"] or 0.0, json.loads(row["detail"] or "{}"), blocked=row["blocked"] or 0)

    def after(self, earlier: "StageReport") -> "StageReport":
        """This pass's report when an earlier pass of the stage in the same run (judging while a dispatched run still
        generated) computed some of its cells: they count as computed by the run, not as cached; failed and blocked
        are this pass's (what still fails or waits); time and numbers in ``detail`` add up."""
        detail = dict(self.detail)
        for key, value in earlier.detail.items():
            if isinstance(value, (int, float)) and isinstance(detail.get(key), (int, float)):
                detail[key] = detail[key] + value
        detail["passes"] = int(earlier.detail.get("passes", 1)) + 1
        return StageReport(self.stage, self.planned, max(0, self.cached - earlier.computed),
                           self.computed + earlier.computed, self.failed, self.seconds + earlier.seconds, detail,
                           self.first_error or earlier.first_error, self.blocked)

    @property
    def attempted(self) -> int:
        """The cells this run tried to compute (cached cells are not tried)."""
        return self.computed + self.failed

    @property
    def failed_share(self) -> float:
        return self.failed / self.attempted if self.attempted else 0.0

    def line(self) -> str:
        return (f"{self.stage:<30} planned {self.planned:>6}  cached {self.cached:>6}  "
                f"computed {self.computed:>6}  failed {self.failed:>4}  blocked {self.blocked:>4}  {self.seconds:8.1f}s")

    def to_dict(self) -> dict:
        return asdict(self)


def sum_reports(reports: list[StageReport]) -> StageReport:
    """A stage's report from its chunks' reports (the first one carries planned / cached)."""
    total = reports[0]
    for report in reports[1:]:
        total = total.merge(report)
    return total


def combine(reports: list[StageReport]) -> StageReport:
    """One stage's report from its groups' (each counted its own cells: planned and cached add up too)."""
    total = reports[0]
    for report in reports[1:]:
        merged = total.merge(report)
        merged.planned, merged.cached = total.planned + report.planned, total.cached + report.cached
        total = merged
    total.detail.pop("group", None)
    return total


def _stage_file(run_id: str, stage: str, group: list[str] | None) -> str:
    """The name of the stage's row in ``runs`` (its file in a folder lake), in the run's partition."""
    suffix = "" if group is None else "." + safe_name("+".join(sorted(group)))
    return f"{stage}{suffix}.parquet"


def recorded_stage(lake: Lake, *, run_id: str, stage: str, group: list[str] | None = None) -> StageReport | None:
    """What an earlier pass of ``stage`` in run ``run_id`` recorded (its row), None when none did."""
    name = _stage_file(run_id, stage, group)
    try:
        rows = lake.read_named("runs", name, {"run_id": run_id})
        if rows is None:
            return None
        row = rows.to_pylist()[0]
    except (OSError, IndexError, pa.ArrowException) as exc:  # a damaged row: this pass's counts stand alone
        log.warning("%s: could not read the earlier pass's counts (%s): this pass's are recorded alone",
                    lake.table_dir("runs") / name, exc)
        return None
    return StageReport.from_row(row)


def record_stage(lake: Lake, *, run_id: str, report: StageReport, config: str, board: str | None = None,
                 group: list[str] | None = None) -> None:
    """One row per (run, stage), its own file: a killed run keeps the stages it finished. A stage dispatched in groups
    of models (``dialogbench/dispatch/units.py``) has one row per group, ``detail.group`` naming its models."""
    finished = now()
    started_at = finished - dt.timedelta(seconds=report.seconds)
    row = {"run_id": run_id, "stage": report.stage, "planned": report.planned, "cached": report.cached,
           "computed": report.computed, "failed": report.failed, "blocked": report.blocked, "seconds": report.seconds,
           "started_at": started_at, "finished_at": finished, "config": redact(config),
           "detail": redact(json.dumps(report.detail, sort_keys=True, default=str)), "board": board,
           **_provenance()}
    lake.write("runs", pa.Table.from_pylist([row], schema=RUNS), partition={"run_id": run_id},
               name=_stage_file(run_id, report.stage, group))


def _provenance() -> dict:
    from dialogbench.run.environment import environment

    found = environment()
    return {"commit": found["commit"], "versions": list(found["versions"].items()), "host": found["host"],
            "gpu": found["gpu"]}


def failing_stages(stages: Iterable[StageReport | dict], policy: "FailOn") -> list[StageReport]:
    """The stages whose failed cells fail the run under ``policy`` (``Config.fail_on``): ``any`` failed cell;
    a failed ``share`` of the cells the stage tried above the threshold; ``never``."""
    reports = [s if isinstance(s, StageReport) else StageReport(**s) for s in stages]
    if policy.cells == "never":
        return []
    if policy.cells == "any":
        return [r for r in reports if r.failed]
    return [r for r in reports if r.failed and r.failed_share > policy.share]


def failure_message(failing: list[StageReport], policy: "FailOn") -> str:
    """What the run's Failed state says: the rule, then each failing stage with its counts."""
    rule = ("any failed cell" if policy.cells == "any"
            else f"a stage with more than {policy.share:.1%} of its cells failed")
    stages = "; ".join(f"{r.stage}: {r.failed} of {r.attempted} failed ({r.failed_share:.0%})" for r in failing)
    cells = sum(r.failed for r in failing)
    return (f"{cells} cell(s) failed in {len(failing)} stage(s) (fail_on: {rule}): {stages}. "
            "They are in the `failures` view; the next run retries them.")


def failure_lines(stages: Iterable[StageReport | dict], policy: "FailOn", problems: Iterable[str] = ()) -> list[str]:
    """Each reason the run fails, one line each: its failed cells under ``policy`` (one line per failing stage, after
    the rule), then each family check's problem (a drifted canary, a judge that cannot be read)."""
    failing = failing_stages(stages, policy)
    return [*([failure_message(failing, policy)] if failing else []), *problems]


def run_failure(stages: Iterable[StageReport | dict], policy: "FailOn", problems: Iterable[str] = ()) -> str | None:
    """Why the run fails, or None: ``failure_lines`` joined."""
    return "; ".join(failure_lines(stages, policy, problems)) or None


def run_tags(config: "Config", config_path: str, families: Iterable[str], stages: Iterable) -> list[str]:
    """How a run is tagged (Prefect tags): ``config:<file stem>``, ``board:<board>``, ``family:<name>`` for each
    family that runs, ``model:<name>`` for each model a stage of the run (``stages``) calls (chatbots and judges)."""
    models = sorted({m.name for stage in stages for m in stage.models(config)})
    return [*_run_tags(config, config_path), *(f"family:{f}" for f in families), *(f"model:{m}" for m in models)]


def family_tags(config: "Config", config_path: str, family: str, stages: Iterable) -> list[str]:
    """A family subflow's tags: the run's config and board, its own family, the models its ``stages`` call."""
    models = sorted({m.name for stage in stages for m in stage.models(config)})
    return [*_run_tags(config, config_path), f"family:{family}", *(f"model:{m}" for m in models)]


def _run_tags(config: "Config", config_path: str) -> list[str]:
    from dialogbench.run.boards import folder_name  # a file's name may hold ESC or BEL: the tag keeps its safe characters

    return [f"config:{folder_name(Path(config_path).stem)}", *([f"board:{config.board}"] if config.board else [])]
