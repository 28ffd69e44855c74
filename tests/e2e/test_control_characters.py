"""A real `dialogbench run` whose chatbot and judge answer with ESC sequences (an OSC 52 clipboard write), BEL, NUL,
a lone CR and a bidi override: report.md, report.html, explorer.html, the `--json` summary, the CLI's stdout, its
log lines (stderr) and every artifact the run published to Prefect (read back from the temporary API's own
database) carry none of them raw, only visible escapes; the lake keeps the text as the models wrote it."""

from __future__ import annotations

import json
import sqlite3

import pyarrow.parquet as pq
import pytest
import yaml

from dialogbench.text.textsafe import visible
from tests.e2e.conftest import REPO, run_cli
from tests.text.test_textsafe import FORBIDDEN, HOSTILE, _strings

pytestmark = pytest.mark.slow

SHOWN = "\\x1b]52;c;ZWNobyBwd25lZA==\\x07"  # the OSC 52 sequence as the pages and artifacts show it


def test_model_output_reaches_no_terminal_or_page_raw(tmp_path):
    lake = tmp_path / "lake"
    config = tmp_path / "hostile.yaml"
    config.write_text(yaml.safe_dump({
        "lake": str(lake),
        "models": [{"name": "bot-a", "backend": "scripted", "script": [f"Sure. {HOSTILE}", "Fine, see you."]},
                   {"name": "bot-b", "backend": "scripted", "script": ["Okay.", "Why not?"]}],
        "judges": [{"name": "judge", "backend": "scripted",
                    "script": [f"Choice: Yes\nIndex: 3\nReason: it wrote {HOSTILE}",
                               "Choice: No\nIndex: None\nReason: fine", f"!error:the endpoint said {HOSTILE}"]}],
        "botchat": {"judge": "judge", "n": [4], "limit": 4,
                    "dataset": str(REPO / "data_lake/raw/botchat/mutual_test.jsonl"),
                    "unieval_examples": str(REPO / "data_lake/raw/botchat/unieval_examples.json")},
        "fail_on": {"cells": "never"},  # the judge's failed cell (its error holds the text too) ends the run Completed
        "judge_checks": {"max_unparsed": 0.9, "probes": 0},
    }))
    summary = tmp_path / "summary.json"
    result = run_cli(["run", "--config", str(config), "--json", str(summary)], tmp_path,
                     temporary=True)  # its database is read below
    assert result.returncode == 0, result.stderr[-3000:]

    # the lake keeps what the models wrote
    utterances = [u for f in (lake / "generations").rglob("*.parquet") for r in pq.read_table(f).to_pylist()
                  for u in r["utterances"]]
    assert f"Sure. {HOSTILE}" in utterances
    errors = [r["error"] for f in (lake / "failures").rglob("*.parquet") for r in pq.read_table(f).to_pylist()]
    assert errors and all(HOSTILE in e for e in errors)

    # the pages: nothing raw, the text shown as escapes
    reports = lake / "reports"
    for name in ("report.md", "report.html", "explorer.html"):
        text = (reports / name).read_text(encoding="utf-8")
        assert not FORBIDDEN.search(text), (name, FORBIDDEN.search(text))
    assert SHOWN in (reports / "report.md").read_text() and SHOWN in (reports / "report.html").read_text()

    # the summary (every string of it, the leaderboard included) and what the CLI printed
    written = json.loads(summary.read_text())
    assert written["leaderboard"]["botchat"] and not [s for s in _strings(written) if FORBIDDEN.search(s)]
    assert "UniEval pass@N" in result.stdout and not FORBIDDEN.search(result.stdout)
    # the logs too: the stage's warning quotes the failed cell's first error, which holds the judge's text
    assert visible(f"first error: the endpoint said {HOSTILE}") in result.stderr
    assert not FORBIDDEN.search(result.stderr)

    # what the run published to Prefect: every artifact's data and description
    with sqlite3.connect(tmp_path / "prefect" / "prefect.db") as db:
        rows = db.execute("select key, type, data, description from artifact").fetchall()
    published = {key: [] for key, *_ in rows}
    for key, _, data, description in rows:
        value = json.loads(data) if data else None
        if isinstance(value, str) and value[:1] in "[{":  # a table's rows are stored as a JSON string of their own
            value = json.loads(value)
        published[key] += [*_strings(value), description or ""]
    assert {"dialogbench-hostile-report-md", "dialogbench-hostile-failures", "dialogbench-hostile-leaderboard-botchat",
            "dialogbench-hostile-stages"} <= set(published)
    assert not [(k, t) for k, texts in published.items() for t in texts if FORBIDDEN.search(t)]
    assert any(SHOWN in t for t in published["dialogbench-hostile-report-md"])
    assert any(visible(HOSTILE) in t for t in published["dialogbench-hostile-failures"])
