"""The history a board's nights leave (``metric_pairs``, ``metric_snapshots``), hand-made with the report tests' own
rows, for the pages' checks in a browser: ``tests/report/test_ahead.py``'s paired comparisons ("Who is really ahead":
ahead, behind, within noise, cannot tell, not measured) and ``tests/report/test_trends.py``'s five nights ("Trends":
beta's third night not measured, gamma's fourth on part of its cells), written for any board."""

from __future__ import annotations

from dialogbench.history.tables import METRIC_PAIRS_TABLE, METRIC_SNAPSHOTS_TABLE
from dialogbench.lake import Lake
from tests.report import test_ahead, test_trends

BOARD = test_trends.BOARD
NIGHTS = 5  # test_trends.five_nights: runs r1 .. r5
NOT_MEASURED_NIGHT = 3  # beta's value of this night is not measured: a gap in its line


def write_history(lake: Lake, *, board: str = BOARD) -> Lake:
    """Write both tests' rows of their board (not another board's run) as ``board``'s; returns ``lake``."""
    def on(rows: list[dict], theirs: str) -> list[dict]:
        return [{**r, "board": board} for r in rows if r["board"] == theirs]

    METRIC_PAIRS_TABLE.write(lake, on(test_ahead.comparisons(), test_ahead.BOARD))
    METRIC_SNAPSHOTS_TABLE.write(lake, on(test_trends.five_nights(), test_trends.BOARD))
    return lake
