"""Nothing rendered or printed carries a control character (dialogbench/text/textsafe.py): model output holding ESC
sequences (OSC 52 writes a terminal's clipboard), BEL, NUL, a lone CR or a bidi override reaches report.html,
report.md, the explorer and the Prefect artifacts as visible escapes (``\\x1b``, ``\\u202e``), while the lake keeps
the raw text. The whole run, through the CLI and Prefect, is tests/e2e/test_control_characters.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.fakes.synthetic_lake import synthetic_lake
from dialogbench.run.registry import open_lake
from dialogbench.explorer import write_explorer
from dialogbench.lake import Lake
from dialogbench.report.build import write_report
from dialogbench.text.textsafe import CONTROLS, visible, visible_tree
from dialogbench.run import registry

OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # "copy 'echo pwned' to the clipboard", as a terminal reads it
HOSTILE = f"red \x1b[31malert\x1b[0m, {OSC52} clip, bell\x07, nul\x00, cr\rover, \u202eevil\u202c, del\x7f, csi\x9b."
# what a terminal or a page must never receive raw: C0 but \n and \t, DEL, C1, the bidi overrides and isolates
FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_visible_writes_each_control_as_an_escape_and_keeps_the_rest():
    assert visible(HOSTILE) == ("red \\x1b[31malert\\x1b[0m, \\x1b]52;c;ZWNobyBwd25lZA==\\x07 clip, bell\\x07, "
                                "nul\\x00, cr\\x0dover, \\u202eevil\\u202c, del\\x7f, csi\\x9b.")
    plain = "Line one\n\tindented — naïve café, 日本語, emoji 🙂, <b>&amp;</b> \\x1b as typed"
    assert visible(plain) is plain
    assert visible("a\r\nb") == "a\nb"  # a CRLF line end is a line end
    for code in [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F),
                 *range(0x2066, 0x206A)]:
        assert not FORBIDDEN.search(visible(f"x{chr(code)}y")), hex(code)
    assert CONTROLS.pattern == FORBIDDEN.pattern


def test_visible_tree_reaches_every_string_keys_included():
    tree = {"k\x1b": [("v\x07", 1, None), {"deep": "\u2066x"}], "n": 2.5}
    out = visible_tree(tree)
    assert out == {"k\\x1b": [("v\\x07", 1, None), {"deep": "\\u2066x"}], "n": 2.5}
    assert not FORBIDDEN.search(json.dumps(out, ensure_ascii=False))


def test_log_records_are_made_visible_where_they_are_made():
    """The filter that redacts every record (dialogbench/text/redact.py) makes its control characters visible too: a
    stage's warning quotes a failed cell's first error, which can hold model output, and goes to a terminal."""
    import logging

    from dialogbench.text.redact import RedactFilter

    record = logging.LogRecord("dialogbench.stage", logging.WARNING, __file__, 1, "first error: %s", (HOSTILE,), None)
    RedactFilter().filter(record)
    assert record.getMessage() == visible(f"first error: {HOSTILE}")


# -- the pages: report.html, report.md, explorer.html ---------------------------------------------------------------

def hostile_utterance(model: str, item: str, i: int) -> str:
    return f"{model} line {i}: {HOSTILE}"


@pytest.fixture(scope="module")
def lake(tmp_path_factory) -> Lake:
    root = tmp_path_factory.mktemp("textsafe") / "lake"
    synthetic_lake(root, models=["alpha", "beta"], seeds=8, arena_seeds=4, utterance=hostile_utterance, seed=1)
    return open_lake(root)


def test_the_pages_show_model_output_escaped_and_the_lake_keeps_it_raw(lake, tmp_path):
    families = registry.families()
    paths = {**write_report(lake, tmp_path, title="Report \x1b[2J", families=families),
             "explorer": write_explorer(lake, tmp_path, families=families)}
    for kind, path in paths.items():
        text = Path(path).read_text(encoding="utf-8")
        assert not FORBIDDEN.search(text), (kind, FORBIDDEN.search(text))
    for kind in ("html", "md"):
        text = Path(paths[kind]).read_text(encoding="utf-8")
        assert "\\x1b]52;c;ZWNobyBwd25lZA==\\x07" in text and "\\u202eevil\\u202c" in text, kind  # shown as what it is
    explorer = Path(paths["explorer"]).read_text()
    data = json.loads(re.search(r'id="explorer-data">(.*?)</script>', explorer, re.S).group(1))
    shown = list(_strings(data))  # what JSON.parse hands the page's script
    assert not [t for t in shown if FORBIDDEN.search(t)]
    assert any(visible(HOSTILE) in t for t in shown)
    rows = [r for f in (lake.root / "generations").rglob("*.parquet") for r in pq.read_table(f).to_pylist()]
    assert rows and all(HOSTILE in u for r in rows for u in r["utterances"][:1])  # the lake: raw, as generated


# -- the Prefect artifacts: what tasks/artifacts.py hands to Prefect --------------------------------------------------

@pytest.fixture
def published(monkeypatch):
    """Every create_* call of tasks/artifacts.py, with its arguments (no Prefect API is called)."""
    import tasks.artifacts as artifacts

    calls: list[tuple[str, dict]] = []
    for name in ("create_table_artifact", "create_markdown_artifact", "create_link_artifact",
                 "create_progress_artifact"):
        monkeypatch.setattr(artifacts, name, lambda _name=name, **kwargs: calls.append((_name, kwargs)))
    return calls


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def test_every_artifact_carries_its_text_escaped(published, tmp_path, monkeypatch):
    import tasks.artifacts as artifacts
    from dialogbench.run.registry import validate_config

    report_md = tmp_path / "report.md"
    report_md.write_text(f"# Report\n\n{HOSTILE}\n", encoding="utf-8")  # as raw as a renderer could ever leave it
    run = f"run-{HOSTILE}"
    artifacts.publish_stages(run, [{"stage": f"generate:{HOSTILE}", "planned": 1, "cached": 0, "computed": 1,
                                    "failed": 0, "seconds": 0.1}])
    artifacts.publish_leaderboards(run, {"botchat": [{"model": HOSTILE, "pass@4": 0.5}],
                                         "gameeval": {"askguess": [{"model": "m", "note": HOSTILE}]}})
    artifacts.publish_report(run, {"html": str(tmp_path / "r" / "x" / "y" / "report.html"), "md": str(report_md),
                                   "explorer": str(tmp_path / "explorer.html")},
                             url="http://box:8765", board="nightly")
    artifacts.publish_changes(run, [{"family": "botchat", "board": "nightly", "metric": "pass_rate", "model": HOSTILE,
                                     "slice": "n=4", "status": "new", "previous": None, "value": 0.5, "delta": None,
                                     "outside_interval": None, "cause": HOSTILE, "previous_run_id": None}])
    monkeypatch.setattr(artifacts, "run_failures", lambda lake, run_id: [
        {"stage": "botchat_unieval", "item_id": "MT-1", "models": ["bot-a"], "judge": "judge", "attempts": 1,
         "error": f"backend said: {HOSTILE}", "cell_key": "k"}])
    config = validate_config({"lake": str(tmp_path / "lake"),
                              "models": [{"name": "bot-a", "backend": "scripted", "script": ["x"]}]})
    artifacts.publish_failures(config, run)

    kinds = [name for name, _ in published]
    assert kinds.count("create_table_artifact") == 5 and "create_markdown_artifact" in kinds
    assert kinds.count("create_link_artifact") == 2
    texts = [s for _, kwargs in published for s in _strings(kwargs)]
    assert not [t for t in texts if FORBIDDEN.search(t)]
    markdown = next(k["markdown"] for n, k in published if n == "create_markdown_artifact")
    assert "\\x1b]52;c;ZWNobyBwd25lZA==\\x07" in markdown and "\\u202eevil" in markdown
    failures = next(k["table"] for n, k in published if n == "create_table_artifact" and k["key"].endswith("failures"))
    assert failures[0]["error"] == visible(f"backend said: {HOSTILE}")
