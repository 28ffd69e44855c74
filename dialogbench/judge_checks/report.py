"""The judge checks' report section, "Can the judge tell?": per (judge, protocol) of the board, how many verdicts
could not be read and how often the judge gave the same answer, against the thresholds, with what each finding
means for the numbers."""

from __future__ import annotations

from dialogbench.judge_checks.check import settings_from_yaml
from dialogbench.judge_checks.health import HEALTH_SQL, findings
from dialogbench.report.section import Context, ReportSection, Rows
from dialogbench.report.tables import NO_DATA, Section, Table, num, pct

QUERIES = {"health": HEALTH_SQL, "run_config": "select run_config from report_header"}


def derive(rows: dict[str, Rows], context: Context) -> dict:
    settings = context.judge_checks or settings_from_yaml(((rows.get("run_config") or [{}])[0]).get("run_config"))
    health = rows.get("health") or []
    return {"health": health, "settings": settings, "findings": findings(health, settings) if settings.enabled else []}


def sections(data: dict) -> list[Section]:
    health, settings, found = data["health"], data["settings"], data["findings"]
    if not health:
        return [Section("judge-checks", "Can the judge tell?", empty=NO_DATA)]
    by = {(f.judge, f.protocol, f.check) for f in found}
    rows = []
    for r in health:
        unread = (r["judge"], r["protocol"], "unparsed") in by
        same = (r["judge"], r["protocol"], "discrimination") in by
        verdict = ("not measured: its verdicts cannot be read" if unread else
                   "not measured: it tells nothing apart" if same else
                   f"too few verdicts to tell (fewer than {settings.min_verdicts})"
                   if r["parsed"] < settings.min_verdicts else "usable")
        rows.append([r["judge"], r["protocol"], num(r["verdicts"], 0), f"{pct(r['unparsed_share'])}" + (" ⚠" if unread else ""),
                     f"{r['top_answer'] or '–'}\n{pct(r['top_share'])} of parsed" + (" ⚠" if same else ""),
                     num(r.get("rating_spread"), 2), verdict])
    table = Table(["Judge", "protocol", "verdicts", "unreadable", "most frequent answer", "spread of model means",
                   "verdict"], rows, numeric_from=2,
                  caption=f"Over the board's current judgments. unreadable: verdicts the parser could not read "
                          f"(threshold {pct(settings.max_unparsed)}); most frequent answer: its share of the parsed "
                          f"verdicts (threshold {pct(settings.max_same_answer)} from {settings.min_verdicts} parsed "
                          "verdicts on); spread of model means: for ratings, the largest minus the smallest model's "
                          "mean rating.")
    intro = ("A judge whose verdicts cannot be read, or that gives the same answer to nearly everything, measures "
             "nothing: the numbers that rest on it are shown as not measured, never as scores, and "
             + (f"the run fails on {', '.join(settings.fail)} (judge_checks.fail)." if settings.fail
                else "the run goes on (judge_checks.fail is empty)."))
    warnings = [f.why + "." for f in found]
    return [Section("judge-checks", "Can the judge tell?", intro, [table], warnings=warnings)]


REPORT = ReportSection(queries=QUERIES, sections=sections, derive=derive)
