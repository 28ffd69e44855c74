"""The canary's report section: the latest canary run's agreement per judge and stage, flagged below the
threshold, and the agreement over the last runs."""

from __future__ import annotations

from dialogbench.report.checks import FLAG
from dialogbench.report.section import ReportSection
from dialogbench.report.tables import Section, Table, num, pct

RUNS_SHOWN = 10


def sections(data: dict) -> list[Section]:
    rows = data["agreement"] or []
    if not rows:
        return [Section("canary", "Judge canary", empty="No canary run yet (a `canary:` section in the config runs "
                                                       "one every night).")]
    latest = rows[-1]["run_id"]
    tonight = [r for r in rows if r["run_id"] == latest]
    flagged = [r for r in tonight if r["flagged"]]
    table = Table(["Judge", "stage", "judgments", "same answer", "agreement", "threshold"],
                  [[r["judge"], r["stage"], num(r["judgments"], 0), num(r["agree"], 0),
                    pct(r["agreement"]) + (f" {FLAG}" if r["flagged"] else ""), pct(r["min_agreement"])]
                   for r in tonight], numeric_from=2)
    runs = list(dict.fromkeys(r["run_id"] for r in rows))[-RUNS_SHOWN:]
    trend = Table(["Run", "judge", "stage", "agreement"],
                  [[r["run_id"], r["judge"], r["stage"], pct(r["agreement"]) + (f" {FLAG}" if r["flagged"] else "")]
                   for r in rows if r["run_id"] in runs], f"The last {len(runs)} canary run(s).", numeric_from=3,
                  collapsed=True)
    warnings = [f"{r['judge']} on {r['stage']}: {pct(r['agreement'])} of the canary judgments gave the first night's "
                f"answer, below the threshold {pct(r['min_agreement'])} ({FLAG}); the run ended Failed. Compare "
                "answer with baseline in canary_judgments." for r in flagged]
    intro = (f"Run {latest}: a fixed set of judgments is judged again every run, outside the cache, and each answer "
             "compared with the first night's (the verdict stored when the cell was first judged). A judge whose "
             "answers move with its config unchanged drifts (an endpoint's model updated, an engine change, "
             "sampling noise): its numbers move without a cause in the changes above.")
    return [Section("canary", "Judge canary", intro, [table, trend], warnings=warnings)]


REPORT = ReportSection(queries={"agreement": "select * from canary_agreement order by created_at, judge, stage"},
                       sections=sections)
