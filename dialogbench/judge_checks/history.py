"""The judge checks' probe history in the report: for each (judge, protocol) with probes on two runs of the board or
more, a chart of the evidence pooled night after night (``judge_probe_history``: the distinct items the same judge
config has answered so far, one line per kind, its 95% interval shaded: with ``judge_checks.rotate`` the band
narrows as nights add new items), and a table of each kind's latest night beside its pooled evidence."""

from __future__ import annotations

from dialogbench.report import svg
from dialogbench.report.checks import interval
from dialogbench.report.tables import Table, num, pct
from dialogbench.report.run_axis import run_labels

SQL = ("select * from judge_probe_history where board is not distinct from (select board from current_board) "
       "order by judge, protocol, kind, run_at")


def _series(rows: list[dict]) -> dict[tuple[str, str], list[dict]]:
    """The rows of each (judge, protocol) of its latest judge config (an earlier config's nights are another
    series)."""
    latest: dict[tuple[str, str], tuple] = {}
    for r in rows:
        key = (r["judge"], r["protocol"])
        if key not in latest or r["run_at"] > latest[key][0]:
            latest[key] = (r["run_at"], r["judge_fp"], r["protocol_version"])
    out: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        key = (r["judge"], r["protocol"])
        if (r["judge_fp"], r["protocol_version"]) == latest[key][1:]:
            out.setdefault(key, []).append(r)
    return out


def charts(rows: list[dict], *, threshold: float) -> list[tuple[str, str]]:
    """(caption, SVG) per (judge, protocol) whose latest judge config has probes on two runs or more."""
    found = []
    for (judge, protocol), series_rows in sorted(_series(rows).items()):
        runs = sorted({(r["run_at"], r["run_id"]) for r in series_rows})
        if len(runs) < 2:
            continue
        place = {run_id: x for x, (_, run_id) in enumerate(runs)}
        lines: dict[str, list] = {}
        notes: dict[str, dict[int, str]] = {}
        for r in series_rows:
            x = place[r["run_id"]]
            lines.setdefault(r["kind"], []).append((x, r["pooled_accuracy"], r["pooled_ci_low"], r["pooled_ci_high"]))
            notes.setdefault(r["kind"], {})[x] = (f"run {r['run_id']}: {r['correct']} of {r['probes']} tonight; "
                                                  f"{r['pooled_correct']} of {r['pooled_probes']} items so far")
        drawn = svg.band_chart(lines, x_labels=run_labels([(x, at, run) for x, (at, run) in enumerate(runs)]),
                               label=f"{judge} on {protocol}: known-answer probes pooled over the runs",
                               y_label="accuracy so far (%)", percent=True, notes=notes)
        found.append((f"{judge} on {protocol}: accuracy on its known-answer probes, pooled over the distinct items "
                      f"answered up to each of {len(runs)} runs, one line per kind, the 95% interval shaded "
                      f"(threshold {pct(threshold)} on the interval's lower end with items: hard)", drawn))
    return found


def table(rows: list[dict]) -> Table | None:
    """Each kind's latest night and the evidence pooled up to it (None without rows)."""
    body = []
    for (judge, protocol), series_rows in sorted(_series(rows).items()):
        last: dict[str, dict] = {}
        nights: dict[str, int] = {}
        for r in series_rows:
            nights[r["kind"]] = nights.get(r["kind"], 0) + 1
            if r["kind"] not in last or r["run_at"] >= last[r["kind"]]["run_at"]:
                last[r["kind"]] = r
        for kind, r in sorted(last.items()):
            body.append([judge, protocol, kind, num(nights[kind], 0),
                         f"{r['correct']} / {r['probes']}\n{pct(r['accuracy'])} {interval(r['ci_low'], r['ci_high'])}",
                         f"{r['pooled_correct']} / {r['pooled_probes']}\n{pct(r['pooled_accuracy'])} "
                         f"{interval(r['pooled_ci_low'], r['pooled_ci_high'])}"])
    if not body:
        return None
    return Table(["Judge", "protocol", "probe kind", "runs", "latest run [95% CI]", "pooled so far [95% CI]"], body,
                 numeric_from=3, collapsed=True,
                 caption="Known-answer probes over the runs of the judge's current config: the latest run's items, and "
                         "every distinct item it has answered so far (judge_checks.rotate asks new ones each night)")
