"""The report's "Trends": each headline number over the board's runs (``report_trends``, over ``metric_history``), a
line per model with its 95% interval as a shaded band, one chart per (leaderboard, metric, slice). A night whose
value was not measured (its judge failed a judge check) or is missing is a gap in the line, never a point; a value
resting on part of its cells is a hollow dot. Protocols' numbers only (not the judge checks'). One judge per metric
and the largest N (as ``ahead``); a metric with more than ``SLICES_MAX`` slices (MT-Bench-101's tasks, SpyFall's
villagers) and a series one night old are left out, and at most ``CHARTS_MAX`` charts are drawn: the section says
what it left out. With one night on the board there is no trend yet, and the section says so. A model rated by the
chart's judge when that judge is the model itself (``judge_checks.self_judging``: the same name, or the same weights
and revision) is marked ``†`` in the chart's legend and table, and the section's text has the legend."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dialogbench.judge_checks.self_judging import LEGEND, Identity, marked, same_model
from dialogbench.report import svg
from dialogbench.report.ahead import choose_judges, family_title, is_rate, metric_order, sort_key
from dialogbench.report.run_axis import run_labels
from dialogbench.report.tables import Section, Table
from dialogbench.run.family_spec import Family, family_named

SQL = "select * from report_trends order by family, leaderboard, metric, slice, model, run_index"
CHARTS_MAX = 12
SLICES_MAX = 3  # a metric with more slices than this (after its judge and N are chosen) is left out
TITLE = "Trends"


def protocol(family: str, *, families: Sequence[Family]) -> bool:
    """A benchmark protocol's numbers are headline numbers; a check's (the judge checks' probes) are not. A family
    not among ``families`` (the run's) counts as a protocol."""
    try:
        return family_named(families, family).protocol
    except KeyError:
        return True


def _when(rows: list[dict], index: int) -> str:
    at = next((r["run_at"] for r in rows if r["run_index"] == index and r["run_at"] is not None), None)
    return "date not recorded" if at is None else f"{at:%Y-%m-%d}"


def _percent(metric: str, rows: list[dict]) -> bool:
    return is_rate(metric, (v for r in rows for v in (r["value"], r["ci_low"], r["ci_high"])))


def _value(v, percent: bool) -> str:
    return "–" if v is None else (f"{v:.1%}" if percent else f"{v:,.3f}" if abs(v) < 100 else f"{v:,.1f}")


def selves(rows: list[dict], known: Mapping[str, Identity] | None) -> set[str]:
    """The models of ``rows`` (``report_trends``'s) rated by a judge that is the model itself
    (``self_judging.same_model``; ``known``: identities by name)."""
    return {r["model"] for r in rows if same_model(r["model"], r.get("judge"), known)}


def chart(rows: list[dict], colors: dict[str, str] | None = None, *, families: Sequence[Family],
          known: Mapping[str, Identity] | None = None) -> tuple[str, str, list[list[str]]]:
    """One (family, leaderboard, metric, slice)'s chart: caption, SVG, and a table row per model (first and latest
    night, nights drawn and not). The legend lists the models by their latest value drawn, highest first (as the
    lines end); ``colors``: each model's colour, the same in every chart; ``families``: the run's (the caption's
    family title); ``known``: the run's identities by name, to mark a model its judge is (``selves``)."""
    first = rows[0]
    runs = sorted({(r["run_index"], r["run_at"], r["run_id"]) for r in rows}, key=lambda t: t[0])
    place = {index: x for x, (index, _, _) in enumerate(runs)}
    percent = _percent(first["metric"], rows)
    series: dict[str, list] = {}
    notes: dict[str, dict[int, str]] = {}
    hollow: dict[str, set[int]] = {}
    for r in rows:
        x, m = place[r["run_index"]], r["model"]
        series.setdefault(m, []).append((x, None if r["gap"] else r["value"], r["ci_low"], r["ci_high"]))
        if r["gap"]:
            why = "not measured" if r["measured"] is False else "no value"
            notes.setdefault(m, {})[x] = f"{why}: {r['note']}" if r["note"] else why
        elif r["complete"] is False:
            hollow.setdefault(m, set()).add(x)
            notes.setdefault(m, {})[x] = "incomplete" + (f": {r['note']}" if r["note"] else "")
        if r["run_id"] is not None:
            notes.setdefault(m, {}).setdefault(x, "")
            notes[m][x] = (f"run {r['run_id']}" + (f"; {notes[m][x]}" if notes[m][x] else ""))
    latest = {m: next((y for _, y, _, _ in sorted(pts, reverse=True) if y is not None), None)
              for m, pts in series.items()}
    series = {m: series[m] for m in sorted(series, key=lambda m: (latest[m] is None, -(latest[m] or 0), m))}
    mine = selves(rows, known)
    shown = {m: marked(m, m in mine) for m in series}  # the names the legend and the table show
    name = f"{first['leaderboard']}.{first['metric']}" + (f" ({first['slice']})" if first["slice"] else "")
    caption = (f"{family_title(first['family'], families=families)}: {name} over {len(runs)} runs, one line per "
               "model, the 95% interval shaded; a break is a night not measured or missing, a hollow dot a value on "
               "part of its cells")
    drawn = svg.band_chart({shown[m]: pts for m, pts in series.items()}, x_labels=run_labels(runs),
                           label=f"{name} over the board's runs", y_label=first["metric"] + (" (%)" if percent else ""),
                           percent=percent, notes={shown[m]: v for m, v in notes.items()},
                           hollow={shown[m]: v for m, v in hollow.items()},
                           colors=None if colors is None else {shown[m]: colors[m] for m in series if m in colors})
    table = []
    for m, pts in series.items():
        values = [(x, y) for x, y, _, _ in sorted(pts) if y is not None]
        gaps = sum(1 for _, y, _, _ in pts if y is None)
        table.append([name, shown[m], _value(values[0][1], percent) if values else "–",
                      _value(values[-1][1], percent) if values else "–", f"{len(values)} of {len(runs)}",
                      str(gaps)])
    return caption, drawn, table


def section(rows: list[dict] | None, *, judge: str | None, families: Sequence[Family],
            identities: Mapping[str, Identity] | None = None) -> Section:
    """The section from ``report_trends``'s rows (None: the view is missing) and the report's judge; ``families``
    (the run's) say which are protocols, order the metrics and title them; ``identities`` (the board's latest run's
    models and judges by name, ``self_judging.identities``; none: names alone) find a model that is its chart's judge
    under another name, to mark it."""
    if not rows:
        return Section("trends", TITLE, empty="No run on this board has recorded its metrics yet: the trends start "
                                              "with the second that does.")
    runs = rows[0]["runs"]
    if runs == 1:
        return Section("trends", TITLE, empty=f"One night so far (run {rows[0]['run_id']}, {_when(rows, 0)}): a "
                                              "trend needs a second run on this board.")
    first, last = _when(rows, 0), _when(rows, runs - 1)
    # a check's numbers (judge probes) are its own section's
    rows = [r for r in rows if protocol(r["family"], families=families)]
    if not rows:
        return Section("trends", TITLE, empty="No headline number recorded on this board yet.")
    judges = choose_judges(rows, judge)
    kept = [r for r in rows if r["judge"] == judges[(r["family"], r["leaderboard"], r["metric"])] and r["largest_n"]]
    order = metric_order(families=families)
    by_chart: dict[tuple, list[dict]] = {}
    for r in kept:
        by_chart.setdefault((r["family"], r["leaderboard"], r["metric"], r["slice"]), []).append(r)
    slices: dict[tuple, int] = {}
    for key in by_chart:
        slices[key[:3]] = slices.get(key[:3], 0) + 1
    left_out, young, charts = [], [], []
    for key, count in sorted(slices.items(), key=lambda kv: sort_key(order)(kv[0])):
        if count > SLICES_MAX:
            left_out.append(f"{key[1]}.{key[2]} ({count} slices)")
    for key in sorted(by_chart, key=sort_key(order)):
        found = by_chart[key]
        if slices[key[:3]] > SLICES_MAX:
            continue
        if found[0]["series_runs"] < 2:
            young.append(f"{key[1]}.{key[2]}" + (f" ({key[3]})" if key[3] else ""))
            continue
        charts.append(found)
    over = charts[CHARTS_MAX:]
    models = sorted({r["model"] for found in charts[:CHARTS_MAX] for r in found})
    colors = {m: svg.color(i) for i, m in enumerate(models)}  # a model's colour is the same in every chart
    drawn = [chart(found, colors, families=families, known=identities) for found in charts[:CHARTS_MAX]]
    shown_judges = sorted({judges[k[:3]] for k in by_chart if judges[k[:3]] is not None})
    ns = sorted({f"{r['leaderboard']}.{r['metric']} at N = {r['slice_n']} of {r['ns']} N" for r in kept
                 if (r["ns"] or 0) > 1})
    intro = (f"Each headline number over the board's {runs:,} runs ({first} to {last}), one chart per (leaderboard, "
             "metric, slice) and a line per model; the shaded band is the value's 95% interval (none where the "
             "value has none). A night whose value was not measured (its judge failed a judge check) or is missing "
             "breaks the line (hover the tick on the axis for why); a hollow dot is a value resting on part of its "
             "cells.")
    if shown_judges:
        intro += f" Judge: {', '.join(shown_judges)}."
    if ns:
        intro += " The largest N: " + "; ".join(ns) + "."
    if over:
        intro += (f" Drawn: the first {CHARTS_MAX} charts; left out: "
                  + "; ".join(f"{f[0]['leaderboard']}.{f[0]['metric']}" + (f" ({f[0]['slice']})" if f[0]["slice"]
                                                                            else "") for f in over) + ".")
    if left_out:
        intro += " Left out, too many slices for a chart each: " + "; ".join(left_out) + "."
    if young:
        intro += " Left out, one night so far: " + "; ".join(young) + "."
    if any(selves(found, identities) for found in charts[:CHARTS_MAX]):
        intro += f" {LEGEND}: a chart whose judge is the model itself marks it."
    intro += " Every value: `dialogbench query \"select * from metric_history\"`."
    if not drawn:
        return Section("trends", TITLE, empty=intro)
    table = Table(["Metric", "model", "first night", "latest night", "nights drawn", "gaps"],
                  [row for _, _, rows_ in drawn for row in rows_],
                  "The charts' numbers: each series' first and latest value drawn, the nights drawn and the gaps",
                  numeric_from=2, collapsed=True)
    return Section("trends", TITLE, intro, [table], charts=[(caption, svg_) for caption, svg_, _ in drawn])
