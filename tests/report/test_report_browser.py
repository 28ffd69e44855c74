"""The report in a real headless Chromium (Debian's ``chromium``), driven over the DevTools Protocol:
served over HTTP, it loads with no console errors, no exceptions, no request outside the page, and
its leaderboard table is there. A full-page screenshot is saved (``DIALOGBENCH_SCREENSHOT=path`` keeps
a copy). On a board's hand-made history (tests/report/history_lake.py), "Who is really ahead" lays out its matrices
with the marked cells seen as marked, and "Trends" draws its chart: a visible SVG with its bands, its points and a
break where a night was not measured (``drawn_charts``, ``check_history_chart``: the explorer's test reads its charts
so too). Without Chromium the test fails saying how to install it; ``DIALOGBENCH_NO_BROWSER=1`` skips it."""

from __future__ import annotations

import base64
import contextlib
import functools
import itertools
import json
import os
import shutil
import subprocess
import threading
import time
import urllib.request
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from tests.fakes.synthetic_lake import synthetic_lake
from dialogbench.run.registry import open_lake
from dialogbench.report.build import write_report
from dialogbench.run import registry
from tests.report.history_lake import BOARD, write_history
from tests.report.test_report import MODELS, utterance
from tests.report.test_trends import BETA

pytestmark = pytest.mark.slow
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_browser() -> str:
    if os.environ.get("DIALOGBENCH_NO_BROWSER") == "1":
        pytest.skip("DIALOGBENCH_NO_BROWSER=1")
    for name in BROWSERS:
        if path := shutil.which(name):
            return path
    pytest.fail("no Chromium found: install it (Debian: `apt-get update && apt-get install -y chromium`), "
                "or set DIALOGBENCH_NO_BROWSER=1 to skip this test", pytrace=False)


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


class Page:
    """One DevTools websocket: commands by id, every event kept in ``events``."""

    def __init__(self, url: str) -> None:
        from websockets.sync.client import connect

        self.ws, self.ids, self.events = connect(url, max_size=2**28), itertools.count(1), []

    def send(self, method: str, timeout: float = 30, **params) -> dict:
        ident = next(self.ids)
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if message.get("id") == ident:
                assert "error" not in message, message
                return message["result"]
            self.events.append(message)

    def wait_for(self, method: str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            self.events.append(json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic()))))
        return next(e for e in self.events if e.get("method") == method)


@pytest.fixture
def browser(tmp_path):
    exe, profile = find_browser(), tmp_path / "profile"
    proc = subprocess.Popen([exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                             "--disable-background-networking", "--disable-component-update", "--disable-sync",
                             "--no-first-run", "--no-default-browser-check", f"--user-data-dir={profile}",
                             "--remote-debugging-port=0", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        port_file, deadline = profile / "DevToolsActivePort", time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text().count("\n") >= 1):
            assert proc.poll() is None, proc.stderr.read().decode(errors="replace")[-2000:]
            assert time.monotonic() < deadline, "Chromium did not open its DevTools port in 60 s"
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as response:
            target = next(t for t in json.load(response) if t["type"] == "page")
        page = Page(target["webSocketDebuggerUrl"])
        yield page
        page.ws.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def screenshot(page: "Page", path: Path, *, height: int, width: int = 1280) -> bytes:
    """A PNG of the page's top ``height`` pixels at ``width``, written to ``path`` (and ``DIALOGBENCH_SCREENSHOT``)."""
    shot = page.send("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                     clip={"x": 0, "y": 0, "width": width, "height": height, "scale": 1})
    png = base64.b64decode(shot["data"])
    path.write_bytes(png)
    if os.environ.get("DIALOGBENCH_SCREENSHOT"):
        Path(os.environ["DIALOGBENCH_SCREENSHOT"]).write_bytes(png)
    return png


def page_errors(events: list[dict]) -> list[dict]:
    """Exceptions, console errors and assertions, and error log entries among DevTools ``events``."""
    return [e["params"] for e in events if e.get("method") == "Runtime.exceptionThrown"
            or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "assert"))
            or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")]


@contextlib.contextmanager
def serve(directory: Path, page: str) -> Iterator[str]:
    """``directory`` over HTTP on a free local port; yields ``page``'s URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/{page}"
    finally:
        server.shutdown()
        server.server_close()


def open_page(browser, url: str) -> None:
    """Load ``url`` at 1280 x 2000 with the page, runtime, log and network domains on (errors and requests seen)."""
    for domain in ("Page", "Runtime", "Log", "Network"):
        browser.send(f"{domain}.enable")
    browser.send("Emulation.setDeviceMetricsOverride", width=1280, height=2000, deviceScaleFactor=1, mobile=False)
    browser.send("Page.navigate", url=url)
    browser.wait_for("Page.loadEventFired")


@pytest.fixture
def served_report(tmp_path):
    synthetic_lake(tmp_path / "lake", models=MODELS, seeds=12, arena_seeds=6, utterance=utterance, seed=3)
    out = tmp_path / "site"
    write_report(open_lake(tmp_path / "lake"), out, families=registry.families())
    with serve(out, "report.html") as url:
        yield url


def test_report_loads_in_chromium_without_errors(browser, served_report, tmp_path):
    open_page(browser, served_report)
    result = browser.send("Runtime.evaluate", returnByValue=True, expression="""({
        title: document.title,
        rows: document.querySelectorAll('#leaderboard table.lb tbody tr').length,
        firstSection: document.querySelector('main section').id,
        headers: [...document.querySelectorAll('#leaderboard table.lb th')].map(th => th.textContent),
        scripts: document.querySelectorAll('script').length,
        svgs: document.querySelectorAll('svg').length,
        height: document.documentElement.scrollHeight,
        overflowX: document.documentElement.scrollWidth > window.innerWidth })""")["result"]["value"]
    png = screenshot(browser, tmp_path / "report.png", height=min(int(result["height"]), 16000))
    requests = sorted({e["params"]["request"]["url"] for e in browser.events
                       if e.get("method") == "Network.requestWillBeSent"})
    assert page_errors(browser.events) == []
    assert requests == [served_report]  # nothing else fetched: no fonts, scripts, images, favicon
    assert result["title"] == "dialogbench — BotChat, MT-Bench-101 and GameEval report"
    assert result["firstSection"] == "changes"  # the report opens with what changed since the previous run
    assert result["rows"] == len(MODELS) and "Win + Tie vs GT" in result["headers"]
    assert result["scripts"] == 0 and result["svgs"] == 5 and not result["overflowX"]
    assert png.startswith(b"\x89PNG") and len(png) > 10_000


# What Chromium drew of each trend chart under ``scope`` (a CSS selector): the SVG's rendered box, each shaded band's
# (a polygon over a run of nights, a bar for a lone night), the points (hollow: on part of its cells), each gap's tick
# and why, and each line segment's colour and horizontal extent, all in page pixels.
CHARTS = """((scope) => {
  const box = (e) => { const r = e.getBoundingClientRect(); return {x: r.left, w: r.width, h: r.height}; };
  return [...document.querySelectorAll(scope + ' figure svg')].map((svg) => ({
    caption: svg.closest('figure').querySelector('figcaption').textContent,
    svg: {...box(svg), visible: svg.checkVisibility()},
    bands: [...svg.querySelectorAll('polygon.band, line.band')].map(box),
    points: [...svg.querySelectorAll('circle')].map((c) => ({...box(c), hollow: c.getAttribute('fill') === '#fff',
                                                               title: c.querySelector('title').textContent})),
    gaps: [...svg.querySelectorAll('line.gap')].map((g) => ({...box(g), title: g.querySelector('title').textContent})),
    segments: [...svg.querySelectorAll('polyline.seg')].map((p) => ({...box(p), stroke: p.getAttribute('stroke')})),
  }));
})"""


def drawn_charts(page: "Page", scope: str) -> list[dict]:
    result = page.send("Runtime.evaluate", returnByValue=True, expression=f"{CHARTS}({json.dumps(scope)})")
    assert "exceptionDetails" not in result, result
    return result["result"]["value"]


def check_history_chart(charts: list[dict]) -> None:
    """The chart of tests/report/history_lake.py's five nights (test_trends' botchat_unieval.pass_rate), as drawn:
    a visible SVG; a band per unbroken run of nights (beta's breaks at night 3); every value a point, gamma's fourth
    night hollow; beta's night 3 not a point but a tick on the axis between its two segments."""
    [chart] = charts
    assert chart["caption"].startswith("BotChat: botchat_unieval.pass_rate (judge=j, n=16) over 5 runs")
    assert chart["svg"]["visible"] and chart["svg"]["w"] > 300 and chart["svg"]["h"] > 100, chart["svg"]
    assert len(chart["bands"]) == 4 and all(b["w"] > 10 and b["h"] > 1 for b in chart["bands"])
    assert len(chart["points"]) == 5 + 5 + 4 and all(p["w"] > 0 and p["h"] > 0 for p in chart["points"])
    assert [p["title"].split(":")[0] for p in chart["points"] if p["hollow"]] == ["gamma @11-23"]
    assert not [p for p in chart["points"] if p["title"].startswith("beta @11-22")]
    [gap] = chart["gaps"]
    assert gap["title"] == "beta @11-22: not drawn; run r3; not measured: judge j fails its judge checks"
    assert gap["h"] > 0
    first, second = sorted((s for s in chart["segments"] if s["stroke"] == BETA), key=lambda s: s["x"])
    assert first["w"] > 10 and second["w"] > 10
    assert first["x"] + first["w"] < gap["x"] < second["x"]  # the line breaks where the night was not measured


AHEAD = """(() => {
  const shown = (e) => { const r = e.getBoundingClientRect(), box = e.closest('.scroll').getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.left >= box.left - 1 && r.right <= box.right + 1
           && getComputedStyle(e).visibility === 'visible'; };
  const cells = (kind) => [...document.querySelectorAll('#ahead table.ahead td.' + kind)].map((td) => ({
    text: td.textContent, shown: shown(td), background: getComputedStyle(td).backgroundColor,
    color: getComputedStyle(td).color, weight: getComputedStyle(td).fontWeight, title: td.getAttribute('title')}));
  const tables = [...document.querySelectorAll('#ahead table.ahead')];
  return {tables: tables.map((t) => ({caption: t.querySelector('caption').textContent,
                                      w: t.getBoundingClientRect().width, h: t.getBoundingClientRect().height})),
          ahead: cells('ahead'), behind: cells('behind'), grey: cells('grey'), plain: cells('plain')};
})()"""


@pytest.fixture
def served_history(tmp_path):
    """tests/report/history_lake.py's five nights and comparisons: the report of its board, over HTTP."""
    out = tmp_path / "site"
    write_report(write_history(open_lake(tmp_path / "lake")), out, board=BOARD, families=registry.families())
    with serve(out, "report.html") as url:
        yield url


def test_who_is_ahead_and_the_trends_render_in_chromium(browser, served_history, tmp_path):
    open_page(browser, served_history)
    ahead = browser.send("Runtime.evaluate", returnByValue=True, expression=AHEAD)["result"]["value"]
    # the matrices (pass@16, rounds, MT-Bench-101's average, the tasks' tally), each laid out
    assert len(ahead["tables"]) == 4 and all(t["w"] > 100 and t["h"] > 50 for t in ahead["tables"])
    # the marked cells, seen: ▲ bold on green where the row's model is ahead, ▼ on red where it is behind
    assert len(ahead["ahead"]) == len(ahead["behind"]) == 4
    for cell in ahead["ahead"]:
        assert cell["shown"] and cell["text"].startswith("▲") and cell["weight"] == "700", cell
        assert cell["background"] == "rgb(218, 251, 225)" and cell["color"] == "rgb(17, 99, 41)", cell
    for cell in ahead["behind"]:
        assert cell["shown"] and cell["text"].startswith("▼") and cell["weight"] == "700", cell
        assert cell["background"] == "rgb(255, 235, 233)" and cell["color"] == "rgb(164, 14, 38)", cell
    # within noise plain, cannot tell / not measured grey with the reason in the tooltip
    assert ahead["plain"]
    assert all(c["shown"] and "▲" not in c["text"] and "▼" not in c["text"] for c in ahead["plain"])
    assert {c["title"].split(":")[0] for c in ahead["grey"]} >= {"cannot tell", "not measured"}
    assert all(c["shown"] and c["color"] == "rgb(140, 149, 159)" for c in ahead["grey"])

    check_history_chart(drawn_charts(browser, "#trends"))
    figure = browser.send("Runtime.evaluate", returnByValue=True, expression=(
        "(() => { const r = document.querySelector('#trends figure').getBoundingClientRect();"
        " return {x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height}; })()"))["result"]["value"]
    shot = browser.send("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                        clip={"x": figure["x"], "y": figure["y"], "width": figure["w"], "height": figure["h"],
                              "scale": 1})
    png = base64.b64decode(shot["data"])
    (tmp_path / "trends.png").write_bytes(png)
    assert png.startswith(b"\x89PNG") and len(png) > 5_000  # a drawn chart, not a blank box
    requests = sorted({e["params"]["request"]["url"] for e in browser.events
                       if e.get("method") == "Network.requestWillBeSent"})
    assert page_errors(browser.events) == [] and requests == [served_history]
