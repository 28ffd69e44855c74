"""The explorer's wiring: ``dialogbench explore`` (a reader: a missing lake refused, the lake's lease held), the
pipeline's render step writing it beside the report, and its link artifact."""

from __future__ import annotations

import json
import re

from dialogbench.cli import main
from dialogbench.run.registry import run_for
from tasks import artifacts
from tasks.lake import render_report
from tests.explorer.lakes import staged_config


def embedded(path) -> dict:
    page = path.read_text()
    return json.loads(re.search(r'id="explorer-data">(.*?)</script>', page, re.S).group(1))


def test_explore_command(lake, tmp_path, capsys):
    out = tmp_path / "site"
    assert main(["explore", "--lake", str(lake.root), "--out", str(out), "--limit", "2"]) == 0
    assert capsys.readouterr().out.strip() == f"explorer: {out / 'explorer.html'}"
    data = embedded(out / "explorer.html")
    assert data["limit"] == 2 and all(c["shown"] == min(2, c["records"]) for c in data["protocols"].values())
    assert main(["explore", "--lake", str(lake.root)]) == 0  # default: beside the report, <lake>/reports
    assert (lake.root / "reports" / "explorer.html").is_file()


def test_explore_refuses_a_lake_that_does_not_exist(tmp_path, capsys):
    missing = tmp_path / "no-such-lake"
    assert main(["explore", "--lake", str(missing)]) == 2
    assert f"{missing}: no lake here" in capsys.readouterr().err and not missing.exists()


def test_the_render_step_writes_the_explorer_beside_the_report(lake):
    config = staged_config(lake.root.parent)  # the config that wrote the lake
    paths = render_report.fn(run_for(config, source="staged.yaml"), "run-9", None)
    assert {"html", "md", "explorer", "note"} <= set(paths)
    run = lake.root / "reports" / "runs" / "run-9"
    assert paths["explorer"] == str(run / "explorer.html")
    for folder in (run, lake.root / "reports" / "boards" / config.board, lake.root / "reports"):  # not ad hoc: the top
        assert 'href="report.html"' in (folder / "explorer.html").read_text(), folder
        assert (folder / "report.html").is_file()


def test_publish_report_links_the_explorer(tmp_path, monkeypatch):
    made = []
    monkeypatch.setattr(artifacts, "create_link_artifact", lambda **kw: made.append(kw))
    monkeypatch.setattr(artifacts, "create_markdown_artifact", lambda **kw: made.append(kw))
    (tmp_path / "report.md").write_text("# report\n")
    paths = {"html": str(tmp_path / "report.html"), "md": str(tmp_path / "report.md"),
             "explorer": str(tmp_path / "explorer.html")}
    artifacts.publish_report("run-1", paths, url="http://gpu-box:8765", board="nightly")
    links = {m["key"]: m for m in made}
    assert set(links) == {"dialogbench-nightly-report", "dialogbench-nightly-report-md",
                          "dialogbench-nightly-explorer"}  # the board's own keys
    assert links["dialogbench-nightly-explorer"]["link"] == "http://gpu-box:8765/runs/run-1/explorer.html"
    assert links["dialogbench-nightly-report"]["link"] == "http://gpu-box:8765/runs/run-1/report.html"
    assert "explorer (run-1)" == links["dialogbench-nightly-explorer"]["link_text"]
    made.clear()  # without report.url: no link a browser would refuse, a note saying how to serve the report
    artifacts.publish_report("run-1", paths, board="demo")
    notes = {m["key"]: m for m in made}
    assert set(notes) == {"dialogbench-demo-report", "dialogbench-demo-report-md"}
    assert "dialogbench serve" in notes["dialogbench-demo-report"]["markdown"] and "file://" not in str(made)
