"""The explorer's "Trends" (dialogbench/explorer/trends.py): the board's trend charts, read with the report's judge and
drawn by the report's own code, are the report's very charts (same SVG, captions and table of numbers), in a folded
panel above the filters and never in the embedded data; a night not measured is a gap there too; a board with no
trend yet says why; a model name with markup stays text. On hand-made history (tests/report/history_lake.py) and on
two real nights of every family's stages (tests/stage_runner.py's ``night``). Chromium: test_explorer_browser.py."""

from __future__ import annotations

import json
import re
import shutil
from html import escape, unescape

import pytest

from dialogbench.backends import clear_backends
from dialogbench.explorer import write_explorer
from dialogbench.explorer.collect import collect, collect_page
from dialogbench.explorer.records import Source
from dialogbench.explorer.trends import report_judge
from dialogbench.history.tables import METRIC_SNAPSHOTS_TABLE
from dialogbench.lake.catalog import connect
from dialogbench.run.registry import open_lake
from dialogbench.report.build import write_report
from dialogbench.text.textsafe import visible
from dialogbench.run import registry
from tests import stage_runner
from tests.explorer.lakes import EVIL, staged_config
from tests.report.history_lake import BOARD, write_history
from tests.report.test_trends import BETA, PASS, segments, snapshot

FIGURE = re.compile(r"<figure>(<svg.*?</svg>)<figcaption>(.*?)</figcaption></figure>", re.S)


def site(lake, folder, *, board: str | None = BOARD) -> tuple[str, str]:
    """The report and the explorer of ``board`` written side by side in ``folder``: (report.html, explorer.html)."""
    write_report(lake, folder, board=board, families=registry.families())
    write_explorer(lake, folder, board=board, families=registry.families())
    return (folder / "report.html").read_text(), (folder / "explorer.html").read_text()


def report_trends(page: str) -> str:
    return page.split('<section id="trends">')[1].split("</section>")[0]


def panel(page: str) -> str:
    """The explorer's Trends panel, from its tag to its end (nested ``details`` included)."""
    found = re.search(r'<details class="trends" id="trends">.*?</details>(?=<form )', page, re.S)
    assert found, "no Trends panel before the filters"
    return found.group(0)


def embedded(page: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="explorer-data">(.*?)</script>', page,
                                re.S).group(1))


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """Five nights of hand-made history on board ``nightly``; the report and the explorer written from it."""
    root = tmp_path_factory.mktemp("explorer-trends")
    lake = write_history(open_lake(root / "lake"))
    report, explorer = site(lake, root / "site")
    return lake, report, explorer


def test_the_panel_holds_the_reports_charts(history):
    lake, report, explorer = history
    theirs, ours = FIGURE.findall(report_trends(report)), FIGURE.findall(panel(explorer))
    assert len(ours) == 1 and ours == theirs  # the same SVG and caption
    assert unescape(ours[0][1]).startswith("BotChat: botchat_unieval.pass_rate (judge=j, n=16) over 5 runs")
    table = re.compile(r"<details><summary>The charts&#x27; numbers.*?</table></div></details>", re.S)
    assert table.findall(panel(explorer)) == table.findall(report_trends(report)) != []
    about = re.compile(r'<p class="about">.*?</p>', re.S)
    assert about.findall(panel(explorer)) == about.findall(report_trends(report)) != []
    # folded, after the records' counts and before the filters; it links the report's section beside it
    head = panel(explorer).split(">", 1)[0]
    assert "open" not in head and explorer.index('id="caps-body"') < explorer.index('id="trends"')
    assert "Trends: 1 chart of the board&#x27;s headline numbers over its runs</summary>" in panel(explorer)
    assert 'href="report.html#trends"' in panel(explorer)


def test_the_charts_are_markup_not_data(history, tmp_path):
    lake, _, explorer = history
    held = embedded(explorer)
    # the data as before: no chart in it
    assert held == json.loads(json.dumps(collect(lake, board=BOARD, families=registry.families())))
    assert "<svg" not in json.dumps(held) and explorer.count("<svg") == 1
    data, section = collect_page(lake, board=BOARD, families=registry.families())
    assert data == collect(lake, board=BOARD, families=registry.families()) and len(section.charts) == 1
    assert collect_page(lake, board=BOARD, with_trends=False, families=registry.families())[1] is None
    # no report beside it: no link to one
    alone = write_explorer(lake, tmp_path, board=BOARD, families=registry.families()).read_text()
    assert "report.html" not in alone and FIGURE.findall(panel(alone)) == FIGURE.findall(panel(explorer))


def test_a_night_not_measured_is_a_gap_in_the_explorer_too(history):
    [(chart, _)] = FIGURE.findall(panel(history[2]))
    assert segments(chart, BETA) == 2  # nights 1-2 and 4-5: night 3 was not measured
    assert chart.count('class="gap"') == 1
    assert "<title>beta @11-22: not drawn; run r3; not measured: judge j fails its judge checks</title>" in chart
    assert not re.search(r"<circle [^>]*><title>beta @11-22", chart)
    assert len(re.findall(r'<polygon class="band"', chart)) == 4  # alpha, gamma, beta's two


def test_no_trend_yet(tmp_path):
    empty = open_lake(tmp_path / "empty")
    page = write_explorer(empty, tmp_path / "a", families=registry.families()).read_text()
    assert "Trends: none drawn yet</summary>" in panel(page) and "<svg" not in page
    assert "No run on this board has recorded its metrics yet" in panel(page)
    one = open_lake(tmp_path / "one")
    METRIC_SNAPSHOTS_TABLE.write(one, [snapshot(PASS, "judge=j, n=16", m, 1, 0.5) for m in ("alpha", "beta")])
    page = write_explorer(one, tmp_path / "b", board=BOARD, families=registry.families()).read_text()
    assert "One night so far (run r1, 2026-11-20)" in panel(page) and "<svg" not in page
    # another board's page: not its nights
    other = write_explorer(one, tmp_path / "c", board="another", families=registry.families()).read_text()
    assert "No run on this board has recorded its metrics yet" in panel(other)


def test_a_model_name_with_markup_stays_text_in_the_charts(tmp_path):
    lake = open_lake(tmp_path / "lake")
    names = (EVIL, "esc\x1b[1mbold")
    METRIC_SNAPSHOTS_TABLE.write(lake, [snapshot(PASS, "judge=j, n=16", m, night, 0.5 + night / 100)
                                        for m in names for night in (1, 2)])
    page = write_explorer(lake, tmp_path / "site", board=BOARD, families=registry.families()).read_text()
    [(chart, _)] = FIGURE.findall(panel(page))
    assert page.count("<script") == 2 and page.count("</script>") == 2 and "<b>" not in page
    for name in names:  # escaped, its control characters made visible (as the page's data has them)
        assert f"<title>{visible(escape(name))} @11-20: " in chart and f">{visible(escape(name))}</text>" in chart
    assert "\x1b" not in page


def test_the_reports_judge_is_charted(lake, tmp_path):
    """A metric two judges rated: the report's judge (the one with the most rows in the judged views: here ``judge``,
    every family's) is charted, though the other has more rows of the metric (two N); as in the report."""
    shutil.copytree(lake.root, tmp_path / "lake")  # the session's staged lake, whose tables this test must not touch
    copy = open_lake(tmp_path / "lake")
    with connect(copy) as con:
        [(board,)] = con.execute("select board from default_board").fetchall()
    METRIC_SNAPSHOTS_TABLE.write(copy, [snapshot(PASS, slice_, "bot-a", night, 0.5, board=board) for night in (1, 2)
                                        for slice_ in ("judge=judge, n=16", "judge=zeta, n=8", "judge=zeta, n=16")])
    page = write_explorer(copy, tmp_path / "site", families=registry.families()).read_text()
    [(_, caption)] = FIGURE.findall(panel(page))
    assert "(judge=judge, n=16) over 2 runs" in caption and "Judge: judge." in panel(page)
    assert "zeta" not in panel(page)


@pytest.fixture(scope="module")
def nights(tmp_path_factory):
    """Two nights of every built-in family's stages (scripted models and judge), each recording its snapshot."""
    config = staged_config(tmp_path_factory.mktemp("explorer-nights"), seeds=2)
    clear_backends()
    try:
        for run in ("night-1", "night-2"):
            assert stage_runner.night(config, run) > 0
    finally:
        clear_backends()
    return config


@pytest.mark.slow  # two nights of every stage, then the report: about a minute on two cores
def test_the_same_charts_on_two_real_nights(nights, tmp_path):
    lake = open_lake(nights.lake)
    report, explorer = site(lake, tmp_path / "site", board=None)  # the lake's default board: the nights'
    theirs, ours = FIGURE.findall(report_trends(report)), FIGURE.findall(panel(explorer))
    assert ours == theirs and len(ours) >= 3
    assert {unescape(c).split(":")[0] for _, c in ours} == {"BotChat", "MT-Bench-101", "GameEval"}
    assert all(" over 2 runs," in unescape(c) for _, c in ours)
    assert re.search(r'<p class="sub">Judge: judge[.;]', report)  # the report's judge, which the explorer chose too
    # the scripted judge fails its judge checks: its numbers are gaps, night after night, the games' are points
    charts = {unescape(c).split(" over ")[0]: svg_ for svg_, c in ours}
    unieval = charts["BotChat: botchat_unieval.pass_rate (judge=judge, n=6)"]
    assert "<circle" not in unieval and unieval.count('class="gap"') == 4  # two models, two nights
    assert "; run night-2; not measured: " in unieval
    assert charts["GameEval: gameeval_askguess.st (setting=with_description)"].count("<circle") == 4
    with connect(lake) as con:
        assert report_judge(Source(con, 1), families=registry.families()) == "judge"
