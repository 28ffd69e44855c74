"""The explorer in a real headless Chromium over the DevTools Protocol (the report's browser test's helpers), on a
lake every family wrote through its real stages: it loads with no console error or exception and fetches nothing
but itself; every record is there, a page at a time; picking a model shows only its records; "unparseable only"
shows exactly the unparseable ones; the judge's raw output is shown as written, model markup as text; the filters
live in the address's # part. A screenshot is saved (``DIALOGBENCH_SCREENSHOT=path`` keeps a copy). The trend charts
(the report's, folded above the filters) draw, once opened, their bands, points and a gap where a night was not
measured, from a file and over ``dialogbench serve`` (its Content-Security-Policy)."""

from __future__ import annotations

import json
import shutil
import time

import pytest

from dialogbench.explorer import write_explorer
from dialogbench.explorer.collect import collect
from dialogbench.explorer.page import PAGE_SIZE
from dialogbench.lake.catalog import connect
from dialogbench.run.registry import open_lake
from dialogbench.report.build import write_report
from dialogbench.run import registry
from tests.explorer.lakes import EVIL
from tests.report.history_lake import write_history
from tests.report.test_report_browser import (browser, check_history_chart, drawn_charts,  # noqa: F401  (a fixture)
                                              page_errors, screenshot, serve)
from tests.report.test_serve import running

pytestmark = pytest.mark.slow


@pytest.fixture
def served(lake, tmp_path):
    out = tmp_path / "site"
    write_report(lake, out, families=registry.families())
    write_explorer(lake, out, families=registry.families())
    with serve(out, "explorer.html") as url:
        yield url


STATE = """(() => {
    const cards = [...document.querySelectorAll('article.rec')];
    return {count: document.getElementById('count').textContent,
            unparsedCount: document.getElementById('unparsed-count').textContent,
            cards: cards.length, ids: cards.map(c => c.dataset.id),
            models: cards.map(c => c.dataset.models.split(',')),
            parsed: cards.map(c => c.dataset.parsed),
            where: document.querySelector('.pager .where').textContent,
            hash: location.hash}; })()"""


def evaluate(page, expression: str):
    result = page.send("Runtime.evaluate", returnByValue=True, awaitPromise=True, expression=expression)
    assert "exceptionDetails" not in result, result
    return result["result"].get("value")


def choose(page, element: str, value) -> dict:
    """Set a filter as a person would (its change event), then read the page back."""
    prop = "checked" if isinstance(value, bool) else "value"
    literal = json.dumps(value)
    evaluate(page, f"(() => {{ const e = document.getElementById('{element}'); e.{prop} = {literal}; "
                   "e.dispatchEvent(new Event('change', {bubbles: true})); })()")
    return evaluate(page, STATE)


def load(page, url: str, seen: list) -> dict:
    """Navigate afresh (by way of about:blank, so a # address loads the page again); the events so far go to
    ``seen``."""
    page.send("Page.navigate", url="about:blank")
    page.wait_for("Page.loadEventFired")
    seen += page.events
    page.events.clear()
    page.send("Page.navigate", url=url)
    page.wait_for("Page.loadEventFired")
    deadline = time.monotonic() + 30
    while evaluate(page, "document.body && document.body.dataset.ready") != "1":  # the script has run
        assert time.monotonic() < deadline, "the page's script did not finish in 30 s"
        time.sleep(0.05)
    return evaluate(page, STATE)


def test_explorer_in_chromium(browser, served, lake, tmp_path):  # noqa: F811
    data = collect(lake, families=registry.families())
    records, total = data["records"], len(data["records"])
    unparsed = [r["id"] for r in records if not r["parsed"]]
    assert total > PAGE_SIZE and 0 < len(unparsed) < total
    for domain in ("Page", "Runtime", "Log", "Network"):
        browser.send(f"{domain}.enable")
    browser.send("Emulation.setDeviceMetricsOverride", width=1280, height=1600, deviceScaleFactor=1, mobile=False)
    seen: list[dict] = []
    state = load(browser, served, seen)

    # everything, a page at a time
    assert state["cards"] == PAGE_SIZE and state["ids"] == [r["id"] for r in records[:PAGE_SIZE]]
    assert f"{total} records match ({len(unparsed)} unparseable)" in state["count"]
    assert state["unparsedCount"] == f"({len(unparsed)})" and state["where"] == f"page 1 of {-(-total // PAGE_SIZE)}"
    evaluate(browser, "document.querySelector('.pager .next').click()")
    assert evaluate(browser, STATE)["ids"] == [r["id"] for r in records[PAGE_SIZE:2 * PAGE_SIZE]]

    # a model: only its records (a comparison or game it played in counts)
    state = choose(browser, "f-model", "bot-b")
    mine = [r["id"] for r in records if "bot-b" in r["models"]]
    assert state["ids"] == mine[:PAGE_SIZE] and all("bot-b" in m for m in state["models"])
    assert state["count"].startswith(f"{len(mine)} records match")
    assert any(len(m) == 2 for m in state["models"]) and "model=bot-b" in state["hash"]

    # unparseable only: exactly the unparsed records (of the model, then of all)
    state = choose(browser, "f-unparsed", True)
    theirs = [r["id"] for r in records if not r["parsed"] and "bot-b" in r["models"]]
    assert state["ids"] == theirs[:PAGE_SIZE] and state["count"].startswith(f"{len(theirs)} records match")
    assert set(state["parsed"]) == {"false"}
    state = choose(browser, "f-model", "")
    assert state["ids"] == unparsed[:PAGE_SIZE] and state["count"].startswith(f"{len(unparsed)} records match")
    assert state["unparsedCount"] == f"({len(unparsed)})"

    # a protocol, then a verdict of it
    choose(browser, "f-unparsed", False)
    state = choose(browser, "f-protocol", "mtbench101")
    assert state["ids"] == [r["id"] for r in records if r["protocol"] == "mtbench101"]
    state = choose(browser, "f-verdict", "mtbench101\u0000score 7")
    assert state["ids"] == [r["id"] for r in records if r["verdict"] == "score 7"] != []

    # the judge's raw output, as written, for an unparseable verdict; model markup stays text
    target = next(r for r in records if r["protocol"] == "botchat_arena" and EVIL in (r["raw"] or ""))
    evaluate(browser, "document.getElementById('f-reset').click()")
    evaluate(browser, f"(() => {{ const q = document.getElementById('f-q'); q.value = {target['id']!r}; "
                      "document.getElementById('filters').requestSubmit(); })()")
    shown = evaluate(browser, """(() => { const card = document.querySelector('article.rec');
        return {ids: [...document.querySelectorAll('article.rec')].map(c => c.dataset.id),
                raw: card.querySelector('pre.judge-raw').textContent,
                result: card.querySelector('table.kv').textContent,
                dialogues: card.querySelectorAll('table.dlg').length,
                markup: card.querySelectorAll('b').length,
                pwned: window.pwned === undefined ? null : window.pwned,
                scripts: document.querySelectorAll('script').length}; })()""")
    assert shown["ids"] == [target["id"]] and shown["raw"] == target["raw"]
    assert shown["dialogues"] == 2 and shown["markup"] == 0 and shown["pwned"] is None and shown["scripts"] == 2
    assert str(target["result"]["verdict"]) in shown["result"]

    # a linked view: the # part restores the filters
    state = load(browser, served + "#model=bot-a&unparsed=1", seen)
    assert state["ids"] == [r["id"] for r in records if not r["parsed"] and "bot-a" in r["models"]][:PAGE_SIZE]
    assert evaluate(browser, "document.getElementById('f-unparsed').checked") is True

    state = load(browser, served, seen)
    height = min(int(evaluate(browser, "document.documentElement.scrollHeight")), 8000)
    png = screenshot(browser, tmp_path / "explorer.png", height=height)
    seen += browser.events
    errors = page_errors(seen)
    requests = sorted({e["params"]["request"]["url"].split("#")[0] for e in seen
                       if e.get("method") == "Network.requestWillBeSent"})
    assert errors == [] and requests == [served]  # nothing but the page itself, each time it loaded
    assert not evaluate(browser, "document.documentElement.scrollWidth > window.innerWidth")
    assert png.startswith(b"\x89PNG") and len(png) > 10_000


@pytest.fixture
def trends_site(lake, tmp_path):
    """A copy of the session's staged lake (its board's records) with tests/report/history_lake.py's five nights on
    that board; its report and explorer side by side, as a run writes them."""
    shutil.copytree(lake.root, tmp_path / "lake")  # the session's lake's tables stay as they are
    lake = open_lake(tmp_path / "lake")
    with connect(lake) as con:
        [(board,)] = con.execute("select board from default_board").fetchall()
    write_history(lake, board=board)
    out = tmp_path / "reports"
    write_report(lake, out, families=registry.families())
    write_explorer(lake, out, families=registry.families())
    return out


PANEL = """(() => { const panel = document.getElementById('trends');
    return {open: panel.open, summary: panel.querySelector('summary').textContent,
            drawn: panel.querySelector('svg').checkVisibility(),
            before: !!(panel.compareDocumentPosition(document.getElementById('filters'))
                       & Node.DOCUMENT_POSITION_FOLLOWING),
            report: panel.querySelector('a[href="report.html#trends"]') !== null}; })()"""


def test_trend_charts_in_chromium_from_a_file_and_over_serve(browser, trends_site):  # noqa: F811
    for domain in ("Page", "Runtime", "Log", "Network"):
        browser.send(f"{domain}.enable")
    browser.send("Emulation.setDeviceMetricsOverride", width=1280, height=1600, deviceScaleFactor=1, mobile=False)
    with running(trends_site) as port:
        for url in (f"http://127.0.0.1:{port}/explorer.html", (trends_site / "explorer.html").as_uri()):
            seen: list[dict] = []
            state = load(browser, url, seen)
            assert state["cards"] == PAGE_SIZE  # the records as before
            panel = evaluate(browser, PANEL)
            assert panel["summary"] == "Trends: 1 chart of the board's headline numbers over its runs"
            assert not panel["open"] and not panel["drawn"] and panel["before"] and panel["report"], url
            evaluate(browser, "document.querySelector('#trends > summary').click()")
            panel = evaluate(browser, PANEL)
            assert panel["open"] and panel["drawn"]
            check_history_chart(drawn_charts(browser, "#trends"))
            picked = choose(browser, "f-model", "bot-b")  # the filters work as before
            assert picked["cards"] and all("bot-b" in m for m in picked["models"])
            seen += browser.events
            browser.events.clear()
            requests = {e["params"]["request"]["url"].split("#")[0] for e in seen
                        if e.get("method") == "Network.requestWillBeSent"}
            assert page_errors(seen) == [] and requests == {url}, (url, requests)  # the page, nothing else
