"""The report's "Trends" (dialogbench/report/trends.py over report_trends, svg.band_chart): on hand-made snapshots
(metric_snapshots), a night whose value was not measured is a gap in its model's line (two segments, no point),
a value on part of its cells a hollow dot, one judge and the largest N are charted, what is left out is named, at
most CHARTS_MAX charts are drawn, and a board with one night says so instead of drawing; a model its chart's judge
is (the same name, or the same weights and revision) is marked ``†`` in the chart and its table, the legend once."""

from __future__ import annotations

import datetime as dt
import re
from html import unescape

import pytest

from dialogbench.history.tables import METRIC_SNAPSHOTS_TABLE
from dialogbench.judge_checks.self_judging import LEGEND, MARK
from dialogbench.lake.catalog import connect
from dialogbench.run.registry import open_lake
from dialogbench.report import svg, trends
from dialogbench.report.markdown import section as md_section
from dialogbench.report.build import render
from dialogbench.report.trends import CHARTS_MAX
from dialogbench.run import registry

T0 = dt.datetime(2026, 11, 20, 2, 0, tzinfo=dt.timezone.utc)
BOARD = "nightly"
PASS = ("botchat", "botchat_unieval", "pass_rate")
TASKS = ("mtbench101", "mtbench101_tasks", "score")
ST = ("gameeval", "gameeval_askguess", "st")
PROBES = ("judge_checks", "judge_probes", "accuracy")
ALPHA, BETA, GAMMA = svg.color(0), svg.color(1), svg.color(2)  # the models' colours, in name order


def snapshot(metric: tuple[str, str, str], slice_: str, model: str, night: int, value: float | None, *,
             measured: bool = True, complete: bool = True, note: str | None = None, board: str = BOARD) -> dict:
    family, leaderboard, name = metric
    judge = dict(part.split("=", 1) for part in slice_.split(", ") if "=" in part).get("judge")
    return {"run_id": f"r{night}", "created_at": T0 + dt.timedelta(days=night - 1), "family": family, "board": board,
            "leaderboard": leaderboard, "metric": name, "model": model, "slice": slice_, "judge": judge,
            "value": value, "ci_low": None if value is None else value - 0.05,
            "ci_high": None if value is None else value + 0.05, "n": 24, "measured": measured, "complete": complete,
            "note": note}


def five_nights() -> list[dict]:
    rows = []
    for night in range(1, 6):
        for n in (8, 16):
            slice_ = f"judge=j, n={n}"
            rows.append(snapshot(PASS, slice_, "alpha", night, 0.6 + 0.01 * night))
            rows.append(snapshot(PASS, slice_, "beta", night, 0.4, measured=night != 3,
                                 note="judge j fails its judge checks" if night == 3 else None))
            rows.append(snapshot(PASS, slice_, "gamma", night, 0.5, complete=night != 4,
                                 note="2 cells failed" if night == 4 else None))
        rows.append(snapshot(PASS, "judge=k, n=16", "alpha", night, 0.1))  # another judge, fewer rows
        rows += [snapshot(TASKS, f"judge=j, task=t{k}", "alpha", night, 7.0) for k in range(1, 5)]  # 4 slices
        rows.append(snapshot(PROBES, "protocol=botchat_unieval, kind=swap", "j", night, 0.9))  # a check, not charted
    rows.append(snapshot(ST, "setting=with_description", "alpha", 5, 0.5))  # one night so far
    rows.append(snapshot(PASS, "judge=j, n=16", "alpha", 9, 0.99, board="other"))  # another board's run
    return rows


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    lake = open_lake(tmp_path_factory.mktemp("trends") / "lake")
    METRIC_SNAPSHOTS_TABLE.write(lake, five_nights())
    return lake


@pytest.fixture(scope="module")
def report(lake) -> dict[str, str]:
    return render(lake, board=BOARD, families=registry.families())


def section(html: str, name: str) -> str:
    return html.split(f'<section id="{name}">')[1].split("</section>")[0]


def figures(html: str) -> dict[str, str]:
    """The section's charts: caption -> SVG."""
    return {unescape(cap): chart for chart, cap in
            re.findall(r"<figure>(<svg.*?</svg>)<figcaption>(.*?)</figcaption></figure>", section(html, "trends"))}


def segments(chart: str, colour: str) -> int:
    return len(re.findall(rf'<polyline class="seg" [^>]*stroke="{colour}"', chart))


def test_a_night_not_measured_is_a_gap_in_the_line(report):
    charts = figures(report["html"])
    assert list(charts) == ["BotChat: botchat_unieval.pass_rate (judge=j, n=16) over 5 runs, one line per model, the "
                            "95% interval shaded; a break is a night not measured or missing, a hollow dot a value on "
                            "part of its cells"]
    chart = next(iter(charts.values()))
    assert segments(chart, ALPHA) == 1 and segments(chart, GAMMA) == 1
    assert segments(chart, BETA) == 2  # nights 1-2 and 4-5: night 3 was not measured
    assert len(re.findall(rf'<polygon class="band" [^>]*fill="{BETA}"', chart)) == 2  # the band breaks too
    assert not re.search(r"<circle [^>]*><title>beta @11-22", chart)  # no point at night 3
    assert len(re.findall(r"<title>beta @11-2[01345]: 40\.0%", chart)) == 4
    assert "<title>beta @11-22: not drawn; run r3; not measured: judge j fails its judge checks</title>" in chart
    # night 4 of gamma rests on part of its cells: a hollow dot, still on the line
    hollow = re.search(r'<circle [^>]*fill="#fff"[^>]*><title>([^<]*)</title>', chart).group(1)
    assert hollow == "gamma @11-23: 50.0% [45.0%, 55.0%]; run r4; incomplete: 2 cells failed"
    # the legend by the latest value, highest first
    assert [m for m in re.findall(r'<text [^>]*>(alpha|beta|gamma)</text>', chart)] == ["alpha", "gamma", "beta"]


def test_what_is_left_out_is_named(report):
    trends = unescape(section(report["html"], "trends"))
    assert "judge=k" not in trends and "n=8)" not in trends and "99.0%" not in section(report["html"], "trends")
    assert "Judge: j." in trends and "The largest N: botchat_unieval.pass_rate at N = 16 of 2 N." in trends
    assert "Left out, too many slices for a chart each: mtbench101_tasks.score (4 slices)." in trends
    assert "Left out, one night so far: gameeval_askguess.st (setting=with_description)." in trends
    assert "judge_probes" not in trends  # the judge checks' numbers are their own section's
    assert "the board's 5 runs (2026-11-20 to 2026-11-24)" in trends
    assert trends.rfind('<p class="about">') > max(trends.rfind("<figure"), trends.rfind("<details"))


def test_markdown_lists_the_charts_and_their_numbers(report):
    md = report["md"].split("## Trends")[1].split("\n## ")[0]
    assert "_Charts: BotChat: botchat\\_unieval.pass\\_rate (judge=j, n=16) over 5 runs" in md
    assert "| botchat\\_unieval.pass\\_rate (judge=j, n=16) | beta | 40.0% | 40.0% | 4 of 5 | 1 |" in md
    assert "| botchat\\_unieval.pass\\_rate (judge=j, n=16) | alpha | 61.0% | 65.0% | 5 of 5 | 0 |" in md


def test_a_model_its_judge_is_is_marked_in_the_chart_and_its_table(lake, report):
    """alpha has the weights of the judge j (the identities the run's recorded config gives): the chart's legend and
    its table name it ``alpha †`` (its line keeps its colour), beta and gamma plainly, the legend once. The report
    of this lake (no such identities, no model named j) marks nothing."""
    assert MARK not in section(report["html"], "trends") and LEGEND not in report["md"]
    with connect(lake, board=BOARD) as con:
        relation = con.execute(trends.SQL)
        rows = [dict(zip([d[0] for d in relation.description], r)) for r in relation.fetchall()]
    known = {"alpha": ("weights", "org/m", ""), "j": ("weights", "org/m", ""), "beta": ("name", "beta")}
    found = trends.section(rows, judge="j", families=registry.families(), identities=known)
    (_, chart), = found.charts
    assert re.findall(r'<text [^>]*>((?:alpha|beta|gamma)[^<]*)</text>', chart) == [f"alpha {MARK}", "gamma", "beta"]
    assert segments(chart, ALPHA) == 1 and segments(chart, BETA) == 2  # each line keeps its colour
    md = md_section(found)
    assert f"| botchat\\_unieval.pass\\_rate (judge=j, n=16) | alpha {MARK} | 61.0% | 65.0% | 5 of 5 | 0 |" in md
    assert "| beta |" in md and "| gamma |" in md and md.count(MARK) == 2 and md.count(LEGEND) == 1


def test_the_view_numbers_the_boards_runs(lake):
    with connect(lake, board=BOARD) as con:
        rows = con.execute("select run_index, runs, slice_n, largest_n, ns, slices, series_runs, gap "
                           "from report_trends where model = 'beta' and slice = 'judge=j, n=16' "
                           "order by run_index").fetchall()
    assert rows == [(i, 5, 16, True, 2, 1, 5, i == 2) for i in range(5)]


def test_one_night_so_far(tmp_path):
    lake = open_lake(tmp_path / "lake")
    METRIC_SNAPSHOTS_TABLE.write(lake, [snapshot(PASS, "judge=j, n=16", m, 1, 0.5) for m in ("alpha", "beta")])
    pages = render(lake, board=BOARD, families=registry.families())
    trends = section(pages["html"], "trends")
    assert "One night so far (run r1, 2026-11-20)" in trends and "<svg" not in trends
    assert "One night so far (run r1, 2026-11-20)" in pages["md"].split("## Trends")[1].split("\n## ")[0]


def test_at_most_charts_max_charts(tmp_path):
    lake = open_lake(tmp_path / "lake")
    extra = [("botchat", f"extra_{k:02d}", "value") for k in range(CHARTS_MAX + 2)]
    METRIC_SNAPSHOTS_TABLE.write(lake, [snapshot(m, "", "alpha", night, 0.5) for m in [PASS, *extra]
                                        for night in (1, 2)])
    pages = render(lake, board=BOARD, families=registry.families())
    charts = figures(pages["html"])
    assert len(charts) == CHARTS_MAX and next(iter(charts)).startswith("BotChat: botchat_unieval.pass_rate")
    trends = unescape(section(pages["html"], "trends"))
    assert (f"Drawn: the first {CHARTS_MAX} charts; left out: extra_{CHARTS_MAX - 1:02d}.value; "
            f"extra_{CHARTS_MAX:02d}.value; extra_{CHARTS_MAX + 1:02d}.value.") in trends


def test_band_chart_breaks_at_gaps():
    chart = svg.band_chart({"a": [(0, 1.0, 0.5, 1.5), (1, 2.0, 1.5, 2.5), (2, None, None, None), (3, 3.0, 2.5, 3.5),
                                  (4, None, None, None), (5, 4.0, None, None), (6, 5.0, 4.0, 6.0)],
                            "b": [(0, 2.0, None, None), (2, 2.5, None, None), (3, 2.6, None, None)]},
                           x_labels=[f"d{i}" for i in range(7)], label="test", notes={"a": {2: "not measured"}})
    assert segments(chart, svg.color(0)) == 2  # 0-1 and 5-6; 3 is a lone point
    assert segments(chart, svg.color(1)) == 1  # b has no point at 1: 0 is alone, 2-3 a line
    assert len(re.findall(r"<circle ", chart)) == 5 + 3
    assert len(re.findall(r'<polygon class="band"', chart)) == 1  # 0-1; 3 and 6 are lone intervals: bars
    assert len(re.findall(r'<line class="band"', chart)) == 2
    assert chart.count('class="gap"') == 1 and "a @d2: not drawn; not measured" in chart


def test_run_labels_tell_runs_apart_however_close_they_ran():
    """A date alone; the time where two runs share a date; the seconds where they share a minute; the run id where
    they share even the second (tests and quick reruns)."""
    import datetime as dt

    from dialogbench.report.run_axis import run_labels

    at = dt.datetime(2026, 11, 28, 16, 49, 5)
    runs = [(0, at - dt.timedelta(days=1), "r0"), (1, at, "r1"), (2, at + dt.timedelta(seconds=20), "r2"),
            (3, at + dt.timedelta(hours=2), "r3"), (4, at + dt.timedelta(hours=2), "r4"), (5, None, "r5")]
    assert run_labels(runs) == ["11-27", "11-28 16:49:05", "11-28 16:49:25", "11-28 18:49:05 r3", "11-28 18:49:05 r4",
                             "r5"]
