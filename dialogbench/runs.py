"""Run bookkeeping: a run id, per-stage counts (planned / cached / computed / failed), the runs table."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from dataclasses import asdict, dataclass, field

import pyarrow as pa

from dialogbench.lake import Lake
from dialogbench.lake.schemas import RUNS
from dialogbench.redact import redact


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def new_run_id() -> str:
    return now().strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:6]


@dataclass
class StageReport:
    stage: str
    planned: int = 0
    cached: int = 0
    computed: int = 0
    failed: int = 0
    seconds: float = 0.0
    detail: dict = field(default_factory=dict)

    def merge(self, other: "StageReport") -> "StageReport":
        """Add a chunk's counts (computed / failed / time, and numbers in ``detail``) to this stage's."""
        detail = dict(self.detail)
        for key, value in other.detail.items():
            both_numbers = isinstance(value, (int, float)) and isinstance(detail.get(key), (int, float))
            detail[key] = detail[key] + value if both_numbers else detail.get(key, value)
        return StageReport(self.stage, self.planned, self.cached, self.computed + other.computed,
                           self.failed + other.failed, self.seconds + other.seconds, detail)

    def line(self) -> str:
        return (f"{self.stage:<30} planned {self.planned:>6}  cached {self.cached:>6}  "
                f"computed {self.computed:>6}  failed {self.failed:>4}  {self.seconds:8.1f}s")

    def to_dict(self) -> dict:
        return asdict(self)


def sum_reports(reports: list[StageReport]) -> StageReport:
    """A stage's report from its chunks' reports (the first one carries planned / cached)."""
    total = reports[0]
    for report in reports[1:]:
        total = total.merge(report)
    return total


def record_stage(lake: Lake, *, run_id: str, report: StageReport, config: str) -> None:
    """One row per (run, stage), its own file: a killed run keeps the stages it finished."""
    finished = now()
    started_at = finished - dt.timedelta(seconds=report.seconds)
    row = {"run_id": run_id, "stage": report.stage, "planned": report.planned, "cached": report.cached,
           "computed": report.computed, "failed": report.failed, "seconds": report.seconds,
           "started_at": started_at, "finished_at": finished, "config": redact(config),
           "detail": redact(json.dumps(report.detail, sort_keys=True, default=str))}
    lake.write("runs", pa.Table.from_pylist([row], schema=RUNS), partition={"run_id": run_id},
               name=f"{report.stage}.parquet")
