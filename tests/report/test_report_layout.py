"""The report's layout at the papers' scale in a real headless Chromium at a 1400 px wide window: no table is wider
than the page's content (no horizontal scroll of the document or of any table's container), with the folded
tables closed and opened; each family's lead table is open, its model names on one line. The lake: 14 models, every
protocol (``paper_lake``). Uses the DevTools helpers of ``test_report_browser``."""

from __future__ import annotations

import pytest

from dialogbench.report.build import write_report
from dialogbench.run import registry
from tests.report.paper_lake import PAPER_MODELS, paper_lake
from tests.report.test_report_browser import browser, page_errors, screenshot, serve  # noqa: F401  (browser: a fixture)

pytestmark = pytest.mark.slow
WIDTH = 1400

MEASURE = """(() => {
  const main = document.querySelector('main'), style = getComputedStyle(main);
  const content = main.getBoundingClientRect().right - parseFloat(style.paddingRight);
  const name = el => (el.closest('section') || {}).id + ': ' + ((el.caption && el.caption.textContent)
      || ((el.closest('details') || {}).querySelector?.('summary') || {}).textContent || el.className || 'table').slice(0, 60);
  const lines = td => { const r = document.createRange(); r.selectNodeContents(td);
      return new Set([...r.getClientRects()].map(b => Math.round(b.top))).size; };
  return {
    content,
    page: [document.documentElement.scrollWidth, document.documentElement.clientWidth],
    tables: [...document.querySelectorAll('table')].map(t => ({name: name(t), right: t.getBoundingClientRect().right,
                                                               shown: t.getClientRects().length > 0})),
    scrolled: [...document.querySelectorAll('.scroll')].filter(d => d.scrollWidth > d.clientWidth + 1).map(
        d => name(d.querySelector('table'))),
    leads: {
      botchat: [...document.querySelectorAll('#leaderboard table.lb tbody td:nth-child(2)')].map(lines),
      mtbench101: [...document.querySelectorAll('#mtbench101 table')[0].querySelectorAll('tbody td:nth-child(2)')].map(lines),
      gameeval: [...document.querySelectorAll('#gameeval table')[0].querySelectorAll('tbody td:nth-child(1)')].map(lines),
    },
    folded: ['#leaderboard table.lb', '#mtbench101 table', '#gameeval table'].filter(
        q => document.querySelector(q).closest('details')),
    spyfall: [...document.querySelectorAll('#gameeval table')].filter(
        t => t.caption && t.caption.textContent.startsWith('Table 3, SpyFall')).map(
        t => t.querySelectorAll('tbody tr').length * 1000 + t.querySelectorAll('thead tr:last-child th').length),
  };
})()"""


@pytest.fixture(scope="module")
def paper_site(tmp_path_factory):
    root = tmp_path_factory.mktemp("paper")
    write_report(paper_lake(root / "lake"), root / "site", families=registry.families())
    return root / "site"


@pytest.mark.parametrize("opened", [False, True], ids=["folded", "opened"])
def test_no_table_is_wider_than_the_page_at_1400px(browser, paper_site, tmp_path, opened):
    for domain in ("Page", "Runtime", "Log"):
        browser.send(f"{domain}.enable")
    browser.send("Emulation.setDeviceMetricsOverride", width=WIDTH, height=1000, deviceScaleFactor=1, mobile=False)
    with serve(paper_site, "report.html") as url:
        browser.send("Page.navigate", url=url)
        browser.wait_for("Page.loadEventFired")
        if opened:
            browser.send("Runtime.evaluate", expression="document.querySelectorAll('details').forEach(d => d.open = true)")
        found = browser.send("Runtime.evaluate", returnByValue=True, expression=MEASURE)["result"]["value"]
        height = browser.send("Runtime.evaluate", returnByValue=True,
                              expression="document.documentElement.scrollHeight")["result"]["value"]
        screenshot(browser, tmp_path / "layout.png", height=min(int(height), 16000), width=WIDTH)
    assert page_errors(browser.events) == []
    shown = [t for t in found["tables"] if t["shown"]]
    assert len(found["tables"]) > 60 and len(shown) == (len(found["tables"]) if opened else len(shown))
    assert len(shown) > (60 if opened else 15)  # the folded tables are only measured once opened
    too_wide = [(t["name"], round(t["right"] - found["content"])) for t in shown if t["right"] > found["content"] + 0.5]
    assert too_wide == []
    assert found["scrolled"] == []
    page_width, window_width = found["page"]
    assert page_width <= window_width
    # at the papers' scale: 14 models, SpyFall's Table 3 as two 14 x 14 matrices (a column per villager model)
    assert found["spyfall"] == [len(PAPER_MODELS) * 1000 + len(PAPER_MODELS) + 1] * 2
    # each family's lead table is open, one row per model, every model name on one line
    assert found["folded"] == []
    for family, lines in found["leads"].items():
        assert len(lines) == len(PAPER_MODELS), family
        assert set(lines) == {1}, family
