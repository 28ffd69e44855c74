"""bench/stats.py stays runnable and counts what the snapshot computes: its quick mode in this process (a few models,
200 resamples, about a second), the JSON's fields and counts; the synthetic units at the paper's scale have the
paper's shape. No timing is asserted."""

from __future__ import annotations

import json
import math

import pytest

from bench import stats as bench
from dialogbench.mtbench101.taxonomy import TASK_CODES

UNITS_METRICS = {"botchat_unieval.pass_rate", "botchat_gteval.win_tie_rate", "mtbench101_leaderboard.avg",
                 "mtbench101_tasks.score", "gameeval_askguess.st", "gameeval_askguess.mean_rounds",
                 "gameeval_spyfall.spy_win_rate", "gameeval_spyfall.spy_living_rounds",
                 "gameeval_tofukingdom.win_rate"}


def _quick(tmp_path, *extra: str) -> dict:
    out = tmp_path / "stats.json"
    assert bench.main(["--quick", "--out", str(out), *extra]) == 0  # quick is not paper scale: never exit 1
    return json.loads(out.read_text())


def test_quick_mode_writes_the_counts_and_seconds(tmp_path, capsys):
    result = _quick(tmp_path)
    printed = capsys.readouterr().out
    sizes = result["sizes"]
    assert sizes["models"] == 3 and sizes["rounds"] == 200 and result["paper_scale"] is False
    m, pairs_of = sizes["models"], math.comb(sizes["models"], 2)
    ns = sizes["n_max"] - sizes["n_min"] + 1
    # (metric, model, slice) series: pass_rate per N, win_tie_rate, avg, a score per task, 2 settings x 2 Ask-Guess
    # metrics, every ordered (spy, villager) pair x 2 SpyFall metrics, 3 TofuKingdom camps
    assert result["series"] == m * ns + m + m + 13 * m + 2 * 2 * m + 2 * m * (m - 1) + 3 * m
    # pairs of models within each slice; a SpyFall slice (a villager) has the m - 1 other models as spies
    assert result["pairs"] == (ns + 1 + 1 + 13 + 2 * 2 + 3) * pairs_of + 2 * m * math.comb(m - 1, 2)
    assert 0 < result["with_interval"] <= result["series"] and 0 < result["tested_pairs"] <= result["pairs"]
    # (c) night over night: every series had a previous night, one paired test each, its units kept row by row
    assert result["changes"] == result["series"] and 0 < result["tested_changes"] <= result["changes"]
    assert result["unit_rows"] == sum(row["clusters"] for row in result["intervals_per_metric"]) > 0
    for field in ("read_units_s", "intervals_s", "compare_s", "changes_units_s", "changes_tests_s", "total_s",
                  "intervals_cpu_s", "compare_cpu_s", "changes_cpu_s", "total_cpu_s", "build_s"):
        assert isinstance(result[field], float) and result[field] >= 0, field
    assert result["intervals_and_pairs_s"] == pytest.approx(
        result["read_units_s"] + result["intervals_s"] + result["compare_s"])
    assert result["total_s"] == pytest.approx(
        result["intervals_and_pairs_s"] + result["changes_units_s"] + result["changes_tests_s"])
    assert {row["metric"] for row in result["intervals_per_metric"]} == UNITS_METRICS
    assert {row["metric"] for row in result["pairs_per_metric"]} == UNITS_METRICS
    assert sum(row["series"] for row in result["intervals_per_metric"]) == result["series"]
    assert sum(row["pairs"] for row in result["pairs_per_metric"]) == result["pairs"]
    assert set(result["rows"]) == {"botchat_units", "mtbench101_units", "gameeval_units"}
    assert all(count > 0 for count in result["rows"].values())
    assert {"botchat", "mtbench101", "gameeval"} <= set(result["families"])
    assert result["machine"]["nproc"] >= 1 and "commit" in result["code"]
    # no orchestration figure given: none computed, and the JSON says what is missing
    assert result["orchestration"]["seconds"] is None and "paper-scale" in result["orchestration"]["missing"]
    assert result["checks"]["share_of_orchestration"] is None and result["checks"]["target_s"] == 60.0
    assert f"({result['series']} series)" in printed and f"({result['pairs']} pairs)" in printed
    assert "total (a) + (b) + (c)" in printed


def test_an_orchestration_figure_gives_the_share(tmp_path):
    given = _quick(tmp_path, "--orchestration-s", "500")
    assert given["orchestration"]["seconds"] == 500.0
    assert given["checks"]["share_of_orchestration"] == pytest.approx(given["total_s"] / 500.0)
    assert given["checks"]["under_target_share"] is (given["total_s"] / 500.0 <= 0.10)
    artifacts = tmp_path / "artifacts.json"  # what bench/artifacts.py writes
    artifacts.write_text(json.dumps({"config": "paper.yaml", "first_run": {"wall_s": 250.0}}))
    read = _quick(tmp_path, "--orchestration-json", str(artifacts))
    assert read["orchestration"]["seconds"] == 250.0 and "first_run.wall_s" in read["orchestration"]["source"]
    (tmp_path / "empty.json").write_text("{}")
    with pytest.raises(SystemExit, match="no run wall time"):
        bench.main(["--quick", "--out", str(tmp_path / "x.json"), "--orchestration-json", str(tmp_path / "empty.json")])


@pytest.mark.parametrize("flags", [["--rounds", "50"], ["--models", "1"], ["--seeds", "0"], ["--n-max", "2"]])
def test_sizes_the_bootstrap_cannot_take_are_refused(tmp_path, flags):
    with pytest.raises(SystemExit, match="error"):
        bench.main(["--quick", "--out", str(tmp_path / "x.json"), *flags])


def test_the_paper_scale_units_have_the_papers_shape():
    sizes = bench.task_sizes(1388)
    assert set(sizes) == set(TASK_CODES) and len(sizes) == 13 and sum(sizes.values()) == 1388
    assert len(bench.vendored_words(None)) == 100 and len(bench.vendored_pairs(None)) == 11
    assert bench.PAPER["models"] == 14 and bench.PAPER["seeds"] == 547 and bench.PAPER["rounds"] == 1000
    assert (bench.PAPER["n_min"], bench.PAPER["n_max"]) == (3, 16)


def test_the_synthetic_units_read_as_the_views_do():
    sizes = dict(bench.QUICK, models=4, seeds=30, n_max=8)
    con, rows = bench.units_connection(sizes)
    try:
        types = dict(con.execute("select column_name, data_type from information_schema.columns "
                                 "where table_name = 'botchat_units'").fetchall())
        assert types == {"leaderboard": "VARCHAR", "metric": "VARCHAR", "model": "VARCHAR",
                         "key_values": "VARCHAR[]", "stratum": "VARCHAR", "cluster": "VARCHAR", "value": "DOUBLE",
                         "weight": "DOUBLE"}
        # pass@N never rises with N (a dialogue that passes at N passed at every smaller N), model 0 is the best
        rates = con.execute("select model, key_values[2]::int as n, avg(value) from botchat_units "
                            "where metric = 'pass_rate' group by all order by model, n").fetchall()
        for model in bench.model_names(4):
            mine = [rate for m, _, rate in rates if m == model]
            assert len(mine) == 8 - 3 + 1 and mine == sorted(mine, reverse=True)
        win_tie = con.execute("select distinct weight from botchat_units where metric = 'win_tie_rate'").fetchall()
        assert win_tie == [(2.0,)]
        strata = con.execute("select count(distinct stratum), count(distinct cluster) from mtbench101_units "
                             "where metric = 'avg' and model = 'model-00'").fetchone()
        assert strata == (13, sizes["dialogues"])
        camps = con.execute("select count(distinct cluster), count(*) from gameeval_units "
                            "where metric = 'win_rate'").fetchone()
        assert camps == (sizes["tofu_games"], 3 * sizes["tofu_games"])  # one row per camp of each game
        assert rows == {name: con.execute(f"select count(*) from {name}").fetchone()[0] for name in rows}
    finally:
        con.close()
