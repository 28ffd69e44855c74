"""The report's opening section: what moved since the previous run (the ``changes`` view), with its cause."""

from __future__ import annotations

from dialogbench.report.checks import FLAG
from dialogbench.report.tables import Section, Table, num

ROWS_MAX = 50  # rows of the table; the rest are counted in the intro (all are in the `changes` view)

SUMMARY_SQL = """
select count(*) as series, count(*) filter (where status = 'moved') as moved,
       count(*) filter (where status = 'new') as new, count(*) filter (where outside_interval) as outside,
       count(*) filter (where status = 'within noise') as within_noise,
       count(*) filter (where status = 'not measured') as not_measured,
       count(*) filter (where status = 'incomplete') as incomplete,
       min(run_id) as run_id, count(distinct previous_run_id) as previous_runs, min(previous_run_id) as previous_run_id
from changes
"""


def _value(v) -> str:
    return num(v, 4) if v is not None and abs(v) < 10 else num(v, 1)


def delta_cell(r: dict) -> str:
    if r["status"] in ("not measured", "incomplete"):
        return r["status"]
    if r["status"] == "within noise":
        return (f"{_value(r['delta'])} within noise (paired 95% [{_value(r.get('change_ci_low'))}, "
                f"{_value(r.get('change_ci_high'))}] on {r.get('shared') or 0:,} shared)")
    return "new" if r["status"] == "new" else _value(r["delta"])


def section(summary: list[dict] | None, rows: list[dict] | None) -> Section:
    s = (summary or [{}])[0]
    if not s.get("series"):
        return Section("changes", "Since the previous run", empty="No run has recorded its metrics yet.")
    run = s["run_id"]
    if not s["previous_runs"]:
        return Section("changes", "Since the previous run",
                       f"Run {run} is the first to record its metrics ({s['series']:,} series): the next run is "
                       "compared with it.")
    against = (f"run {s['previous_run_id']}" if s["previous_runs"] == 1
               else f"each series' latest earlier value ({s['previous_runs']} earlier runs)")
    unknown = [f"{s[k]:,} {label}" for k, label in (("not_measured", "not measured (their judge fails a judge "
                                                                    "check)"), ("incomplete", "incomplete (cells "
                                                                    "missing): not compared")) if s.get(k)]
    intro = (f"Run {run} against {against}: {s['series']:,} metric series, {s['moved']:,} moved, {s['new']:,} new, "
             f"{s.get('within_noise') or 0:,} changed within noise (the 95% interval of the paired change, on the "
             f"items both runs share, holds 0: not called a movement), "
             f"{s['outside']:,} outside their 95% interval (marked {FLAG})"
             + "".join(f", {u}" for u in unknown) + ". A cause is listed where the model's "
             "config, the judge's, the family's prompts or config section, the number of cells, or the engine that "
             "served the model or the judge (its recorded version) differ, or where the judge's canary was flagged in "
             "either run (it answered its repeated judgments otherwise than the first night); a move with none is the "
             "judge or an engine answering differently by less than the canary catches, or behind an unchanged "
             "engine record. Every series: "
             "`dialogbench query \"select * from changes\"`; history: `metric_history`.")
    rows = rows or []
    if not rows:
        return Section("changes", "Since the previous run", intro + " Nothing moved.")
    if len(rows) > ROWS_MAX:
        intro += f" The {ROWS_MAX} most notable of {len(rows):,} are shown."
    table = Table(["Family", "metric", "model", "slice", "previous", "now", "Δ", "cause", "previous run"],
                  [[r["family"], f"{r['leaderboard']}.{r['metric']}", r["model"], r["slice"], _value(r["previous"]),
                    _value(r["value"]) + (f" {FLAG}" if r["outside_interval"] else ""), delta_cell(r),
                    r["cause"] or "–", r["previous_run_id"] or "–"] for r in rows[:ROWS_MAX]],
                  "previous / now: the metric's value; Δ: now − previous (none for a value not measured or resting on "
                  "part of its cells: never a movement); cause: what differs between the two runs for this series "
                  "(configs, cells, the engines' recorded versions) and a flagged judge canary.",
                  numeric_from=4)
    warnings = ([f"{s['outside']:,} value(s) moved outside their 95% interval since the previous run ({FLAG})"]
                if s["outside"] else [])
    return Section("changes", "Since the previous run", intro, [table], warnings=warnings)
