"""The explorer's "Trends": the report's trend charts (``report.trends.section`` over ``report_trends``, drawn by
``svg.band_chart``) for the board the page shows, read with the judge the report would choose, so the page holds the
report's very charts: a line per model with its 95% interval as a band, a night not measured (its judge failed a
judge check) or missing a gap in the line. They are put in the page as markup (``panel``), in a folded panel above
the filters, not in the embedded data: the script renders no chart and model names reach them escaped (svg.py)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from dialogbench.explorer.records import Source
from dialogbench.report import trends
from dialogbench.report.data import primary_judge, reporting
from dialogbench.report.html import table
from dialogbench.report.tables import Section
from dialogbench.run.family_spec import Family

ID = "trends"


def report_judge(source: Source, *, families: Sequence[Family]) -> str | None:
    """The report's judge on this board (``report.data.collect``'s): the judge with the most rows in the judged views
    of the reporting families of ``families`` (the run's)."""
    rows = [r for family in reporting(families=families) for key in family.report.judged
            for r in source.read(family.report.queries[key]) or []]
    return primary_judge(rows)


def read(source: Source, *, families: Sequence[Family]) -> Section:
    """The report's "Trends" section for the board ``source`` reads (its connection's ``current_board``). The report's
    judge is looked up only where it can change what is drawn: a metric with values of more than one judge (with one,
    that judge is charted whatever the report's), on a board with a trend (two runs); the judged views it is read
    from cost a second at the papers' scale. ``families``: the run's (the report's)."""
    rows = source.read(trends.SQL)
    judges: dict[tuple, set] = {}
    for r in rows or []:
        if r["judge"] is not None:
            judges.setdefault((r["family"], r["leaderboard"], r["metric"]), set()).add(r["judge"])
    several = bool(rows) and rows[0]["runs"] > 1 and any(len(found) > 1 for found in judges.values())
    return trends.section(rows, judge=report_judge(source, families=families) if several else None,
                          families=families)


def summary(section: Section) -> str:
    if section.empty or not section.charts:
        return f"{trends.TITLE}: none drawn yet"
    count = len(section.charts)
    return f"{trends.TITLE}: {count} chart{'' if count == 1 else 's'} of the board's headline numbers over its runs"


def panel(section: Section | None, *, report_link: str | None = None) -> str:
    """The folded panel (``<details id="trends">``): the charts with their captions as the report has them, the table
    of their numbers, the text that explains them; the section's empty text when there is nothing to draw. ``""``
    for None (a page rendered without trends). ``report_link``: the report, whose "Trends" section is the same."""
    if section is None:
        return ""
    parts = [f'<details class="{ID}" id="{ID}"><summary>{escape(summary(section))}</summary>']
    if section.empty:
        parts.append(f'<p class="empty">{escape(section.empty)}</p>')
    else:
        parts += [f"<figure>{chart}<figcaption>{escape(caption)}</figcaption></figure>"
                  for caption, chart in section.charts]
        parts += [table(t) for t in section.tables]
        if section.intro:
            parts.append(f'<p class="about">{escape(section.intro)}</p>')
    if report_link:
        parts.append(f'<p class="note">The same charts: <a href="{escape(report_link)}#{ID}">the report\'s '
                     f'{escape(trends.TITLE)}</a>.</p>')
    return "".join(parts) + "</details>"
