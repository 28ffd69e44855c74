"""The benchmark stays importable and its backend-call count (part 2) holds: lock-step generation
makes N - 2 backend calls whatever the number of seeds. Scripted backend only: fast."""

from __future__ import annotations

from bench import botchat_pipeline as bench
from tests.conftest import DATASET


def test_backend_calls_are_n_minus_2_for_any_seed_count():
    seeds = bench.read_selected_seeds(DATASET, None)
    rows = bench.backend_calls(seeds, sizes=(1, 4, 16), n=6)
    assert [r["seeds"] for r in rows] == [1, 4, 16]
    for row in rows:
        assert row["calls"] == row["expected"] == 6 - 2, row
        assert row["ok"] and row["failed"] == 0
        assert row["dialogues_written"] == row["seeds"]
        assert row["conversations"] == row["seeds"] * (6 - 2)


def test_report_formats_backend_calls_without_other_parts():
    rows = [{"seeds": 4, "n": 16, "calls": 14, "expected": 14, "ok": True, "conversations": 56,
             "dialogues_written": 4, "failed": 0, "seconds": 0.1}]
    text = bench.format_report({"machine": bench.machine_info(), "backend_calls": rows, "demo_skipped": "--skip-demo"})
    assert "2. backend calls" in text and "skipped" in text
