"""bench/serve.py runs end to end at a tiny size: the server answers every page it times, and the numbers it records
are there (what bench/README.md's table reads)."""

from __future__ import annotations

import json

from bench import serve as bench


def test_the_serve_benchmark_runs_at_a_tiny_size(tmp_path, capsys):
    out = tmp_path / "serve.json"
    assert bench.main(["--models", "2", "--seeds", "3", "--arena-seeds", "2", "--runs", "3", "--requests", "3",
                       "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert list(result["paths"]) == ["/report.html", "/explorer.html", "/", f"/runs/{result['latest_run']}/report.html"]
    for timing in result["paths"].values():
        assert timing["requests"] == 3 and 0 < timing["median_ms"] <= timing["p95_ms"] <= timing["max_ms"]
        assert timing["bytes"] > 0
    assert result["machine"]["nproc"] and result["machine"]["loadavg_at_end"]
    assert "/report.html p95" in capsys.readouterr().out
