"""``dialogbench serve`` (the CLI, a subprocess) in a real headless Chromium over the DevTools Protocol (the report
browser test's helpers): the index, the latest report, the explorer and a run's report, rendered from a small
synthetic lake into the reports layout, load under the server's Content-Security-Policy with no console error, no
exception and no request but the page itself; the explorer's script runs and filters; a path that climbs out of the
reports folder is refused. A screenshot of the index is saved (``DIALOGBENCH_SCREENSHOT=path`` keeps a copy)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from tests.fakes.synthetic_lake import synthetic_lake
from dialogbench.run.registry import open_lake
from dialogbench.explorer import write_explorer
from dialogbench.lake import Lake
from dialogbench.report.build import write_report
from dialogbench.run import registry
from tests.report.test_report import MODELS, utterance
from tests.report.test_report_browser import browser, page_errors, screenshot  # noqa: F401  (browser: a fixture)

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
RUN_ID = "20261126T010000Z-ab12cd"


def render_into(lake: Lake, folder: Path, record: dict | None = None) -> None:
    write_report(lake, folder, families=registry.families())
    write_explorer(lake, folder, families=registry.families())
    if record:
        (folder / "run.json").write_text(json.dumps(record))


@pytest.fixture
def served(tmp_path) -> Iterator[str]:
    """The lake's reports (latest, board ``nightly``, run ``RUN_ID``) served by ``dialogbench serve``; its URL."""
    root = tmp_path / "lake"
    synthetic_lake(root, models=MODELS, seeds=12, arena_seeds=6, utterance=utterance, seed=3)
    (tmp_path / "secret.html").write_text("<p>SECRET beside the lake</p>")
    lake, record = open_lake(root), {"run_id": RUN_ID, "board": "nightly", "config": "configs/nightly.yaml",
                                "started_at": "2026-11-26T01:00:00+00:00",
                                "finished_at": "2026-11-26T01:20:00+00:00", "failed": None}
    render_into(lake, root / "reports")
    render_into(lake, root / "reports" / "boards" / "nightly", record)
    render_into(lake, root / "reports" / "runs" / RUN_ID, record)
    proc = subprocess.Popen([sys.executable, "-m", "dialogbench.cli", "serve", "--lake", str(root), "--port", "0"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        found = re.search(r" at (http://\S+/) ", proc.stdout.readline())
        assert found, proc.stderr.read()
        yield found[1]
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
        assert proc.returncode == 0 and out == "stopped (SIGTERM)\n" and err == "", (out, err)
    finally:
        proc.kill()
        proc.wait()


def visit(page, url: str) -> tuple[list[dict], int]:
    """Load ``url`` afresh; the page's events and its main response's status."""
    page.events.clear()
    page.send("Page.navigate", url=url)
    page.wait_for("Page.loadEventFired")
    responses = [e["params"]["response"] for e in page.events if e.get("method") == "Network.responseReceived"]
    return list(page.events), next(r["status"] for r in responses if r["url"] == url)


def evaluate(page, expression: str):
    result = page.send("Runtime.evaluate", returnByValue=True, expression=expression)
    assert "exceptionDetails" not in result, result
    return result["result"].get("value")


def requested(events: list[dict]) -> list[str]:
    return sorted({e["params"]["request"]["url"] for e in events if e.get("method") == "Network.requestWillBeSent"})


def test_the_served_pages_load_in_chromium_without_errors(browser, served, tmp_path):  # noqa: F811
    for domain in ("Page", "Runtime", "Log", "Network"):
        browser.send(f"{domain}.enable")
    browser.send("Emulation.setDeviceMetricsOverride", width=1280, height=1000, deviceScaleFactor=1, mobile=False)

    events, status = visit(browser, served)
    assert status == 200 and page_errors(events) == [] and requested(events) == [served]
    links = evaluate(browser, "[...document.querySelectorAll('a')].map(a => a.href)")
    run_report = f"{served}runs/{RUN_ID}/report.html"
    assert {f"{served}report.html", f"{served}explorer.html", f"{served}boards/nightly/report.html",
            run_report, f"{served}runs/{RUN_ID}/explorer.html"} <= set(links)
    assert f"{served}runs/{RUN_ID}/report.md" in links
    png = screenshot(browser, tmp_path / "index.png", height=1000)
    assert png.startswith(b"\x89PNG")

    for url in (f"{served}report.html", run_report):
        events, status = visit(browser, url)
        assert status == 200 and page_errors(events) == [] and requested(events) == [url]
        assert evaluate(browser, "document.querySelectorAll('#leaderboard table.lb tbody tr').length") == len(MODELS)

    for url in (f"{served}explorer.html", f"{served}runs/{RUN_ID}/explorer.html"):
        events, status = visit(browser, url)
        assert status == 200 and page_errors(events) == []  # a script the policy blocked says so here
        deadline = time.monotonic() + 30
        while evaluate(browser, "document.body && document.body.dataset.ready") != "1":  # its inline script ran
            assert time.monotonic() < deadline, "the explorer's script did not finish in 30 s"
            time.sleep(0.05)
        first = evaluate(browser, "document.querySelectorAll('article.rec').length")
        evaluate(browser, "(() => { document.getElementById('f-q').value = 'alpha'; "
                          "document.getElementById('filters').requestSubmit(); })()")  # the form, as a person would
        assert 0 < evaluate(browser, "document.querySelectorAll('article.rec').length") <= first
        assert status == 200 and page_errors(browser.events) == [] and requested(browser.events) == [url]

    outside = f"{served}..%2f..%2fsecret.html"  # Chromium keeps %2f: the server gets the climb as written
    events, status = visit(browser, outside)
    assert status == 404 and evaluate(browser, "document.body.innerText").strip() == "404 Not Found"
