"""Night over night without narrating noise: the paired test of a series against its previous night on the units both
share (`metric_changes`, dialogbench/history/noise.py) and what `changes` makes of it ('moved' only when its interval
excludes 0, 'within noise' otherwise)."""

from __future__ import annotations

import numpy as np

from dialogbench.history.noise import change_rows, previous_units, unit_rows
from dialogbench.history.tables import METRIC_CHANGES_TABLE, METRIC_SNAPSHOTS_TABLE, METRIC_UNITS_TABLE
from dialogbench.lake.catalog import connect
from dialogbench.run.registry import open_lake
from dialogbench.stats.bootstrap import Units
from tests.history.test_changes import changes, snapshot

SERIES = ("botchat", "botchat_unieval", "pass_rate")


def units(values, prefix="seed") -> Units:
    return Units.of(("", f"{prefix}{i}", float(v), 1.0) for i, v in enumerate(values))


def test_a_change_on_shared_units_is_tested_against_the_previous_night(tmp_path):
    lake = open_lake(tmp_path / "lake")
    rng = np.random.default_rng(3)
    before = (rng.random(200) < 0.5).astype(float)
    noisy = before.copy()
    noisy[rng.choice(200, 6, replace=False)] = 1 - noisy[rng.choice(200, 6, replace=False)]  # a few flips
    better = np.where(rng.random(200) < 0.4, 1.0, before)  # 40% of the items turned into passes
    first = {(*SERIES, "noisy", "judge=j, n=8"): units(before), (*SERIES, "better", "judge=j, n=8"): units(before)}
    METRIC_UNITS_TABLE.write(lake, unit_rows(first, run_id="r1", board="nightly"))
    METRIC_SNAPSHOTS_TABLE.write(lake, [snapshot("r1", 0, m, float(before.mean())) for m in ("noisy", "better")])
    tonight = {(*SERIES, "noisy", "judge=j, n=8"): units(noisy), (*SERIES, "better", "judge=j, n=8"): units(better),
               (*SERIES, "newcomer", "judge=j, n=8"): units(before)}
    with connect(lake, board="nightly") as con:
        found = previous_units(con, board="nightly", run_id="r2")
    assert {series[3]: run for series, (run, _) in found.items()} == {"noisy": "r1", "better": "r1"}
    rows = {r["model"]: r for r in change_rows(tonight, found, run_id="r2")}
    assert set(rows) == {"noisy", "better"}  # the newcomer has no previous night
    assert rows["noisy"]["ci_low"] <= 0 <= rows["noisy"]["ci_high"] and rows["noisy"]["shared"] == 200
    assert rows["better"]["ci_low"] > 0 and rows["better"]["p"] < 0.01
    assert abs(rows["better"]["shared_delta"] - (better.mean() - before.mean())) < 1e-12


def test_changes_calls_a_move_only_outside_the_paired_interval(tmp_path):
    lake = open_lake(tmp_path / "lake")
    METRIC_SNAPSHOTS_TABLE.write(lake, [
        snapshot("r1", 0, "noise", 0.50, 0.40, 0.60), snapshot("r2", 1, "noise", 0.53, 0.43, 0.63),
        snapshot("r1", 0, "real", 0.50, 0.40, 0.60), snapshot("r2", 1, "real", 0.58, 0.48, 0.68),
        snapshot("r1", 0, "untested", 0.50), snapshot("r2", 1, "untested", 0.52),  # Elo-like: no units
        snapshot("r1", 0, "cached", 0.50, 0.40, 0.60), snapshot("r2", 1, "cached", 0.50, 0.40, 0.60),
    ])

    def change(model, low, high, p, delta):
        return {"run_id": "r2", "family": "botchat", "leaderboard": "botchat_unieval", "metric": "pass_rate",
                "model": model, "slice": "judge=j, n=8", "previous_run_id": "r1", "shared": 100, "shared_value": None,
                "shared_previous": None, "shared_delta": delta, "ci_low": low, "ci_high": high, "p": p, "note": None}

    METRIC_CHANGES_TABLE.write(lake, [change("noise", -0.02, 0.08, 0.3, 0.03), change("real", 0.03, 0.13, 0.002, 0.08),
                                      change("cached", None, None, 1.0, 0.0)])
    found = {model: r for (model, _), r in changes(lake, "nightly").items()}
    assert {m: r["status"] for m, r in found.items()} == {"noise": "within noise", "real": "moved",
                                                          "untested": "moved", "cached": "same"}
    assert (found["noise"]["change_ci_low"], found["noise"]["change_ci_high"], found["noise"]["shared"]) == (
        -0.02, 0.08, 100)
    assert found["noise"]["delta"] == 0.53 - 0.50  # the delta is still shown
