"""A report sized to what ran (issue #36, item 7): MT-Bench-101's Table 3 has a column only for the tasks the board
ran (the authors' order kept, the tier and ability header rows over those alone, in HTML and Markdown alike), and a
judge that fails its judge checks has its reason said once, in its section's Warnings, while each of its cells shows
only 'not measured' (the HTML cell's title names the judge). In Chromium at a 1400 px window the page is no wider
than the window (a wide table scrolls in its own box) and the demo's three tasks fit without scrolling.

The lakes are ``tests/report/test_report.py``'s ``mt_lake`` (the weak model has one unreadable rating, so
``judge_checks.max_unparsed: 0`` makes its judge fail a check) and ``test_report_warnings``' BotChat ``lake_of``."""

from __future__ import annotations

import re

import pytest

from dialogbench.judge_checks.config import JudgeChecksConfig
from dialogbench.judge_checks.health import probe_findings
from dialogbench.mtbench101.report import PROTOCOL, mtbench101, ran_tasks, truncation_table
from dialogbench.mtbench101.taxonomy import TASKS
from dialogbench.report import html, markdown
from dialogbench.report.build import render, write_report
from dialogbench.report.checks import FLAG, judge_warnings, not_measured_cell
from dialogbench.report.tables import Tipped, link
from dialogbench.run import registry
from tests.report.test_report import mt_block, mt_lake
from tests.report.test_report_browser import browser, page_errors, serve  # noqa: F401  (browser: a fixture)
from tests.report.test_report_warnings import lake_of

DEMO_TASKS = ["CM", "SI", "MR"]  # configs/demo.yaml's mtbench101.tasks
JUDGE = "gpt-4"  # mt_lake's judge
FAILING = JudgeChecksConfig(max_unparsed=0.0)  # mt_lake's one unreadable rating fails the judge's check
CELL = f"not measured {FLAG}"
TAIL = ["tasks scored", "unparsed", "missing", "Avg (OpenCompass rule)"]


def table3(block: str) -> str:
    """Table 3 (the section's first table) of an MT-Bench-101 HTML section."""
    return block[block.index("<table"):block.index("</table>")]


def heads(table: str) -> list[str]:
    return re.findall(r"<th[^>]*>([^<]*)</th>", table.split("</thead>")[0].split("<tr>")[-1])


def body_cells(table: str) -> list[list[str]]:
    """Each body row's cells as text (tags dropped, a cell's lines joined by a space)."""
    body = table.split("<tbody>")[1]
    return [[re.sub(r"<[^>]+>", "", re.sub(r"<br>", " ", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr)]
            for tr in re.findall(r"<tr>(.*?)</tr>", body)]


def md_section(md: str) -> str:
    return md.split("## MT-Bench-101")[1].split("\n## ")[0]


def md_rows(section: str) -> list[list[str]]:
    """Table 3's body rows in Markdown (the rows that start with a position)."""
    return [[c.strip() for c in line.strip("|").split(" | ")] for line in section.splitlines()
            if re.match(r"\| \d+ \|", line)]


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> dict:
    """The demo's slice (CM, SI, MR for every model), its judge failing a check."""
    root = tmp_path_factory.mktemp("demo")
    lake = mt_lake(root / "lake", tasks=DEMO_TASKS)
    paths = write_report(lake, root / "site", judge_checks=FAILING, families=registry.families())
    return {"site": root / "site", **{kind: path.read_text() for kind, path in paths.items()}}


def test_only_the_tasks_that_ran_have_a_column_in_the_authors_order(tmp_path):
    lake = mt_lake(tmp_path / "lake", models=["a", "b"], tasks={"a": ["MR", "CM"], "b": ["SI", "CM"]})
    pages = render(lake, families=registry.families())
    table = table3(mt_block(pages["html"]))
    assert heads(table) == ["#", "Model", "Avg", "CM", "SI", "MR", *TAIL]  # the union, in Table 3's order
    groups = [re.findall(r'<th colspan="(\d+)"(?: class="lab")?>([^<]*)</th>', g)
              for g in re.findall(r'<tr class="grp">(.*?)</tr>', table)]
    assert groups == [[("3", ""), ("2", "Perceptivity"), ("1", "Adaptability"), ("4", "")],
                      [("3", ""), ("1", "Memory"), ("1", "Understanding"), ("1", "Reasoning"), ("4", "")]]
    caption = re.search(r"<caption>(.*?)</caption>", table).group(1)
    assert caption.startswith("Tasks: CM Context Memory; SI Separate Input; MR Mathematical Reasoning (the 3 of 13 "
                              "that ran on this board: a task not run has no column). ")
    assert "Anaphora" not in caption
    rows = {r[1]: r for r in body_cells(table)}
    assert rows["a"][4] == "–" and rows["b"][5] == "–"  # a task a model did not run: no score
    assert all(c != "–" for c in (rows["a"][3], rows["a"][5], rows["b"][3], rows["b"][4]))
    # the Markdown page has the same columns and names the same groups
    section = md_section(pages["md"])
    assert "| # | Model | Avg | CM | SI | MR | tasks scored | unparsed | missing | Avg (OpenCompass rule) |" in section
    assert "Columns: CM: Perceptivity / Memory; SI: Perceptivity / Understanding; MR: Adaptability / Reasoning." in section
    assert all(len(r) == 3 + 3 + len(TAIL) for r in md_rows(section))
    # its judge failing a check: each number the model has reads 'not measured', a task it did not run stays '–'
    page = render(lake, judge_checks=FAILING, families=registry.families())["html"]
    failing = {r[1]: r for r in body_cells(table3(mt_block(page)))}
    assert failing["a"][2:6] == [CELL, CELL, "–", CELL] and failing["b"][2:6] == [CELL, CELL, CELL, "–"]


def test_a_full_run_keeps_all_13_columns(tmp_path):
    table = table3(mt_block(render(mt_lake(tmp_path / "lake", models=["a"]), families=registry.families())["html"]))
    assert heads(table) == ["#", "Model", "Avg", *(t.code for t in TASKS), *TAIL]
    assert "<caption>Tasks: CM Context Memory; " in table  # no "that ran" note when every task did


def test_ran_tasks_reads_the_task_rows_and_the_scores():
    assert [t.code for t in ran_tasks({"tasks": [{"task": "PI"}, {"task": "CM"}]})] == ["CM", "PI"]
    # a task with dialogues but no score yet (all unparsed or missing) still ran; a score alone counts too
    assert [t.code for t in ran_tasks({"tasks": [{"task": "GR"}], "leaderboard": [{"SI": 7.0, "AR": None}]})] == [
        "SI", "GR"]
    assert ran_tasks({"leaderboard": [{"model": "a"}]}) == []


def test_the_truncation_table_has_the_tasks_with_answers():
    row = {"answers": 4, "truncated": 1, "unknown_cap": 0, "max_tokens": 4096, "share": 0.25}
    cut = {"a": {**row, "tasks": {"MR": row, "SI": {**row, "truncated": 0, "share": 0.0}}}}
    t = truncation_table(["a"], cut)
    assert t.headers == ["Model", "max_tokens", "answers", "cut", "SI", "MR"]
    assert t.rows[0][-2:] == ["0", f"1 / 4 {FLAG}\n25.0%"]


def test_the_not_measured_reason_is_said_once_and_no_cell_repeats_it(demo):
    block = mt_block(demo["html"])
    reason = "could not be read (judge_checks.max_unparsed 0%)"
    assert block.count(reason) == 1 and block.count("% unreadable") == 1
    warning = next(li for li in re.findall(r"<li>(.*?)</li>", block) if reason in li)
    assert warning.startswith(f"Judge {JUDGE}: not measured — 2% unreadable on {PROTOCOL}. {JUDGE} on {PROTOCOL}: 1 "
                              "of 54 verdicts (2%) ")
    assert warning.endswith(f"Its numbers here show only &#x27;not measured&#x27; {FLAG}; see Can the judge tell?")
    assert block.index("Warnings") < block.index("<table")  # the note comes before the table
    table = table3(block)
    assert heads(table) == ["#", "Model", "Avg", *DEMO_TASKS, *TAIL]
    rows = body_cells(table)
    assert len(rows) == 3
    for row in rows:
        assert row[2:6] == [CELL] * 4 and row[-1] == CELL  # Avg, each task, OpenCompass's Avg: nothing else
    titles = set(re.findall(r'<td class="num warn" title="([^"]*)"', table))
    assert titles == {f"not measured: judge {JUDGE} fails its judge checks on {PROTOCOL} (see Warnings)"}
    assert table.count('title="not measured') == 3 * 5
    # the Markdown page says the same: the reason once, the cells bare
    section = md_section(demo["md"]).replace("\\_", "_")
    assert section.count(reason) == 1 and section.count("% unreadable") == 1
    assert f"- Judge {JUDGE}: not measured — 2% unreadable on {PROTOCOL}. " in section
    assert [r[2:6] + r[-1:] for r in md_rows(section)] == [[CELL] * 5] * 3


def test_the_demos_probe_failure_reads_once_above_bare_cells():
    """The demo's case, the judge right on 4 of 10 basic probes under a 70% gate: one note names the judge, the share
    and the gate; the cells of both pages read 'not measured' alone."""
    [finding] = probe_findings([{"judge": "tiny-judge", "protocol": PROTOCOL, "kind": "golden", "correct": 4,
                                 "probes": 10}], JudgeChecksConfig(items="basic", min_probe_accuracy=0.7))
    row = {"model": "m", "judge": "tiny-judge", "avg": None, "avg_scored": 5.0, "tasks_scored": 3, "unparsed": 0,
           "missing": 0, "CM": 5.0, "SI": 4.0, "MR": 6.0, "opencompass_avg_scored": 5.0, "opencompass_tasks_scored": 3}
    section = mtbench101({"leaderboard": [row], "judge": "tiny-judge", "not_measured": {PROTOCOL: finding},
                          "tasks": [{"model": "m", "judge": "tiny-judge", "task": t, "dialogues": 20}
                                    for t in DEMO_TASKS]})
    page, md = html.section(section), markdown.section(section)
    note = (f"Judge tiny-judge: not measured — 40% of probes right on {PROTOCOL}. tiny-judge on {PROTOCOL} cannot tell: "
            "right on 4 of 10 known-answer probes (40%; golden 4/10), under judge_checks.min_probe_accuracy 70%. Its "
            f"numbers here show only 'not measured' {FLAG}; see Can the judge tell?")
    assert section.warnings[0] == note
    assert page.count("40%") == md.count("40%") == 2 and page.count("probes right") == md.count("probes right") == 1
    assert section.tables[0].headers == ["#", "Model", "Avg", *DEMO_TASKS, *TAIL]
    assert section.tables[0].rows[0][2:6] == [CELL] * 4
    assert section.tables[0].rows[0][-1] == CELL  # the OpenCompass average too


def test_one_note_per_judge_naming_each_protocol_it_fails():
    """A judge failing on two protocols: one note with both reasons; another judge: a note of its own."""
    settings = JudgeChecksConfig(items="basic", min_probe_accuracy=0.7)
    found = probe_findings([{"judge": j, "protocol": p, "kind": "k", "correct": c, "probes": 10}
                            for j, p, c in (("j1", "botchat_unieval", 2), ("j1", "botchat_arena", 5),
                                            ("j2", "botchat_gteval", 1))], settings)
    lines = judge_warnings({"not_measured": {f"{f.judge}/{f.protocol}": f for f in found}})
    assert len(lines) == 2
    assert lines[0].startswith("Judge j1: not measured — 20% of probes right on botchat_unieval; 50% of probes right "
                               "on botchat_arena. j1 on botchat_unieval cannot tell: right on 2 of 10 ")
    assert lines[1].startswith("Judge j2: not measured — 10% of probes right on botchat_gteval. ")
    assert all(line.count("its numbers are not measured") == 0 for line in lines)  # said once, as 'not measured'


def test_a_not_measured_cell_keeps_its_title_through_a_link():
    [finding] = probe_findings([{"judge": "j", "protocol": "p", "kind": "k", "correct": 0, "probes": 10}],
                               JudgeChecksConfig(items="basic"))
    cell = not_measured_cell(finding)
    assert cell == CELL and isinstance(cell, Tipped) and "0%" not in cell.tip
    linked = link(cell, "explorer.html#x")
    assert linked.tip == cell.tip and linked.href == "explorer.html#x"
    assert html.td(linked, True) == ('<td class="num warn" title="not measured: judge j fails its judge checks on p '
                                     f'(see Warnings)"><a class="ex" href="explorer.html#x">{CELL}</a></td>')
    assert html.td("7.00", True) == '<td class="num">7.00</td>'  # a plain cell: no title


def test_botchat_says_a_failing_judge_once_per_section(tmp_path):
    """BotChat's judge says 'No' to 3 of 4 dialogues and ties every Arena game: under max_same_answer 50% it fails on
    both protocols. The leaderboard's Warnings name the judge once with both; the UniEval and Arena sections each
    say their own; the cells read 'not measured' alone."""
    lake = lake_of(tmp_path / "lake", arena=("both", "neither", "both", "both"))
    page = render(lake, judge_checks=JudgeChecksConfig(max_same_answer=0.5, min_verdicts=1),
                  families=registry.families())["md"].replace("\\_", "_")
    sections = {s.split("\n", 1)[0]: s for s in page.split("\n## ")[1:]}
    lead = sections["Leaderboard"]
    [note] = [line for line in lead.splitlines() if "not measured —" in line]
    assert note.startswith("- Judge judge-x: not measured — ") and lead.count("Judge judge-x") == 1
    assert "% same answer on botchat_arena; " in note and "% same answer on botchat_unieval. " in note
    assert lead.count("% same answer") == 2  # each share once, in the note only
    for title, protocol in (("UniEval pass rate vs N", "botchat_unieval"), ("BotChat Arena", "botchat_arena")):
        assert sections[title].count("Judge judge-x: not measured — ") == 1, title
        assert f"same answer on {protocol}. " in sections[title] and sections[title].count("% same answer") == 1
    cells = [c.strip() for line in page.splitlines() if line.startswith("|") for c in line.strip("|").split(" | ")]
    assert CELL in cells and not [c for c in cells if c.startswith(CELL) and c != CELL]


# --- in Chromium at 1400 px ------------------------------------------------------------------------------------

WIDTH = 1400
MEASURE = """(() => {
  const table = document.querySelector('#mtbench101 table'), box = table.closest('.scroll');
  return {page: document.documentElement.scrollWidth, client: document.documentElement.clientWidth,
          table: table.getBoundingClientRect().width, box: box.clientWidth, scrolls: box.scrollWidth > box.clientWidth + 1,
          heads: [...table.querySelectorAll('thead tr:last-child th')].map((th) => th.textContent)};
})()"""


@pytest.mark.slow
@pytest.mark.parametrize("tasks", [DEMO_TASKS, None], ids=["demo-tasks", "all-13"])
def test_the_page_fits_1400px_with_a_judge_not_measured(browser, tasks, tmp_path):  # noqa: F811  (a fixture)
    """The demo's three tasks fit the page, Table 3 unscrolled; all 13 with every cell 'not measured' are wider than
    the page's content, and scroll in their own box: the page itself stays within the window either way."""
    site = tmp_path / "site"
    write_report(mt_lake(tmp_path / "lake", models=["smollm2-135m", "smollm2-135m-t0.7"], tasks=tasks), site,
                 judge_checks=FAILING, families=registry.families())
    for domain in ("Page", "Runtime", "Log"):
        browser.send(f"{domain}.enable")
    browser.send("Emulation.setDeviceMetricsOverride", width=WIDTH, height=1000, deviceScaleFactor=1, mobile=False)
    with serve(site, "report.html") as url:
        browser.send("Page.navigate", url=url)
        browser.wait_for("Page.loadEventFired")
        found = browser.send("Runtime.evaluate", returnByValue=True, expression=MEASURE)["result"]["value"]
    assert page_errors(browser.events) == []
    assert found["page"] <= found["client"] <= WIDTH, found
    assert found["heads"][3:-4] == (tasks or [t.code for t in TASKS])
    if tasks:
        assert not found["scrolls"] and found["table"] <= found["box"], found
    else:
        assert found["scrolls"] and found["box"] < WIDTH, found  # wider than the content: scrolls in its box
