"""The report's leaderboards carry the latest run's 95% intervals and rank ranges (``headline``, via
``dialogbench.stats.shown``): MT-Bench-101's task scores and Avg with the ranks Avg's interval allows under #,
GameEval's Ask-Guess ST and Round (ranks under #), SpyFall's w and l, TofuKingdom's win rate per camp; none for a
number the run recorded as another value. The family views carry the same intervals (``score_ci_low``, ``st_ci_low``,
...)."""

from __future__ import annotations

import datetime as dt
import re

from dialogbench.run.config import ReportConfig
from dialogbench.history.tables import METRIC_SNAPSHOTS_TABLE
from dialogbench.report.build import write_report
from dialogbench.stats.shown import Shown, with_intervals
from dialogbench.run import registry
from tests.gameeval.test_views import gameeval_lake
from tests.report.test_report import mt_block, mt_lake, view
from tests.report.test_report_gameeval import html_section, html_table

AT = dt.datetime(2026, 11, 20, tzinfo=dt.timezone.utc)


def snapshot(lake, rows: list[dict], board: str | None = None) -> None:
    """A recorded run ``r1`` of ``board`` with these metric rows."""
    METRIC_SNAPSHOTS_TABLE.write(lake, [{"run_id": "r1", "created_at": AT, "board": board, "measured": True,
                                         "complete": True, "n": 10, **r} for r in rows])


def test_mtbench101_task_scores_carry_their_interval_and_the_position_its_rank_range(tmp_path):
    lake = mt_lake(tmp_path / "lake", models=["full", "other"])
    avg = {r["model"]: r["avg"] for r in view(lake, "select model, avg from mtbench101_leaderboard")}
    cm = {r["model"]: r["score"] for r in view(lake, "select model, score from mtbench101_tasks where task = 'CM'")}
    snapshot(lake, [
        *({"family": "mtbench101", "leaderboard": "mtbench101_leaderboard", "metric": "avg", "model": m,
           "slice": "judge=gpt-4", "judge": "gpt-4", "value": avg[m], "ci_low": avg[m] - 1.5, "ci_high": avg[m] + 1.5,
           "rank": rank, "rank_low": 1, "rank_high": 2} for m, rank in (("full", 1), ("other", 2))),
        {"family": "mtbench101", "leaderboard": "mtbench101_tasks", "metric": "score", "model": "full",
         "slice": "judge=gpt-4, task=CM", "judge": "gpt-4", "value": cm["full"], "ci_low": cm["full"] - 0.25,
         "ci_high": cm["full"] + 0.5},
        {"family": "mtbench101", "leaderboard": "mtbench101_tasks", "metric": "score", "model": "other",
         "slice": "judge=gpt-4, task=CM", "judge": "gpt-4", "value": cm["other"] + 2, "ci_low": 0.0,
         "ci_high": 9.99}])  # another value than the one shown: its interval is not shown
    # the views carry them too (what `query` and `export` pass on), only for the value recorded
    recorded = {r["model"]: (r["score_ci_low"], r["score_ci_high"])
                for r in view(lake, "select * from mtbench101_tasks where task = 'CM'")}
    assert recorded == {"full": (cm["full"] - 0.25, cm["full"] + 0.5), "other": (None, None)}
    assert {r["model"]: r["avg_ci_low"] for r in view(lake, "select * from mtbench101_leaderboard")} == {
        m: avg[m] - 1.5 for m in ("full", "other")}
    block = mt_block(write_report(lake, tmp_path / "out", families=registry.families())["html"].read_text())
    # below each position, the ranks its Avg's interval allows: both intervals overlap, so either can be first
    rank = '<tr><td>{}<br><span class="more">(1-2)</span></td>'
    first = block[block.index(rank.format(1)):block.index(rank.format(2))]
    assert "<td class=\"nw\">full</td>" in first and f"[{avg['full'] - 1.5:.2f}, {avg['full'] + 1.5:.2f}]" in first
    assert f"[{cm['full'] - 0.25:.2f}, {cm['full'] + 0.5:.2f}]" in first
    assert "[0.00, 9.99]" not in block and "the ranks the Avg&#x27;s interval allows" in block


def test_gameeval_tables_carry_intervals_and_rank_ranges(tmp_path):
    lake = gameeval_lake(tmp_path / "lake")
    ask = {r["model"]: r for r in view(lake, "select * from gameeval_askguess where setting = 'with_description'")}
    spy = view(lake, "select * from gameeval_spyfall where spy_model = 'alpha' and villager_model = 'beta'")[0]
    snapshot(lake, [
        {"family": "gameeval", "leaderboard": "gameeval_askguess", "metric": "st", "model": "alpha",
         "slice": "setting=with_description", "value": ask["alpha"]["st"], "ci_low": 40.0, "ci_high": 85.0,
         "rank": 2, "rank_low": 1, "rank_high": 2},
        {"family": "gameeval", "leaderboard": "gameeval_askguess", "metric": "mean_rounds", "model": "alpha",
         "slice": "setting=with_description", "value": ask["alpha"]["mean_rounds"], "ci_low": 3.0, "ci_high": 5.0},
        {"family": "gameeval", "leaderboard": "gameeval_spyfall", "metric": "spy_win_rate", "model": "alpha",
         "slice": "villager_model=beta", "value": spy["spy_win_rate"], "ci_low": 0.0, "ci_high": 0.67},
        {"family": "gameeval", "leaderboard": "gameeval_tofukingdom", "metric": "win_rate", "model": "alpha",
         "slice": "camp=prince", "value": 2 / 3, "ci_low": 0.25, "ci_high": 1.0, "rank": 1, "rank_low": 1,
         "rank_high": 3}])
    carried = view(lake, "select model, st_ci_low, mean_rounds_ci_high from gameeval_askguess "
                         "where setting = 'with_description' and st_ci_low is not null")
    assert carried == [{"model": "alpha", "st_ci_low": 40.0, "mean_rounds_ci_high": 5.0}]
    assert view(lake, "select spy_win_rate_ci_high, spy_living_rounds_ci_high from gameeval_spyfall "
                      "where spy_win_rate_ci_high is not null") == [{"spy_win_rate_ci_high": 0.67,
                                                                     "spy_living_rounds_ci_high": None}]
    assert view(lake, "select model, camp, win_rate_ci_low from gameeval_tofukingdom "
                      "where win_rate_ci_low is not null") == [{"model": "alpha", "camp": "prince",
                                                                "win_rate_ci_low": 0.25}]
    paths = write_report(lake, tmp_path / "out", settings=ReportConfig(min_cells=1), families=registry.families())
    section = html_section(paths["html"].read_text())
    table2, caption = html_table(section, "Table 2, Ask-Guess w/ prior description")
    assert table2[2] == ["2 (1-2)", "alpha", "4.00 [3.00, 5.00]", "62.50 [40.00, 85.00]", "12.50", "0.00", "25.00",
                         "0.00", "2", "6", "0"]
    assert "below ST and Round: their 95% intervals" in caption
    w, _ = html_table(section, "Table 3, SpyFall, w:")
    assert w[2] == ["alpha", "-", "0.33 (0.67) n=4 [0.00, 0.67]"]
    totals, _ = html_table(section, "Table 4, TofuKingdom Total Points")
    assert totals[1] == ["alpha", "4", "0.67 2 / 3 [0.25, 1.00] rank 1-3", "0.50 1 / 2", "0.33 1 / 3"]


def test_rows_carry_the_interval_and_ranks_of_the_value_they_hold():
    shown = Shown.from_rows([{"leaderboard": "v", "metric": "m", "model": "a", "slice": "judge=j", "raw_value": 0.5,
                              "raw_ci_low": 0.4, "raw_ci_high": 0.6, "rank": 1, "rank_low": 1, "rank_high": 3}])
    row = with_intervals({"m": 0.5}, shown, leaderboard="v", metric="m", model="a", slice="judge=j", column="m")
    assert (row["m_ci_low"], row["m_ci_high"], row["m_ranks"]) == (0.4, 0.6, "1-3")
    stale = with_intervals({"m": 0.7}, shown, leaderboard="v", metric="m", model="a", slice="judge=j", column="m")
    assert (stale["m_ci_low"], stale["m_ranks"]) == (None, None)
    assert shown.interval_text("v", "m", "a", "judge=j", 0.5, scale=100, digits=1) == "[40.0, 60.0]"


def test_botchat_positions_carry_the_ranks_the_sorting_numbers_interval_allows(tmp_path):
    """Sorted by Win + Tie vs GT: each position with the ranks its bootstrap interval allows (only when more than
    the position), and a caption saying whose interval it is."""
    from tests.fakes.synthetic_lake import synthetic_lake
    from dialogbench.run.registry import open_lake

    synthetic_lake(tmp_path / "lake", models=["alpha", "beta", "gamma"], seeds=12, arena_seeds=6, seed=3)
    lake = open_lake(tmp_path / "lake")
    gt = sorted(view(lake, "select model, judge, win_tie_rate from botchat_gteval"),
                key=lambda r: (-r["win_tie_rate"], r["model"]))
    ranges = [(1, 2), (1, 2), (3, 3)]
    snapshot(lake, [{"family": "botchat", "leaderboard": "botchat_gteval", "metric": "win_tie_rate",
                     "model": r["model"], "slice": f"judge={r['judge']}", "judge": r["judge"],
                     "value": r["win_tie_rate"], "ci_low": 0.0, "ci_high": 1.0, "rank": i, "rank_low": low,
                     "rank_high": high} for i, (r, (low, high)) in enumerate(zip(gt, ranges), 1)],
             board="bench")  # synthetic_lake's runs publish to the board 'bench'
    html = write_report(lake, tmp_path / "out", families=registry.families())["html"].read_text()
    table = html[html.index('<table class="lb">'):html.index("</table>")]
    positions = [p for p in (re.sub(r"<[^>]+>", " ", c).split() for c in
                             re.findall(r"<tr><td>(.*?)</td><td class=\"nw\">", table))]
    assert positions == [["1", "(1-2)"], ["2", "(1-2)"], ["3"]]
    assert "Below # in brackets: the ranks Win + Tie vs GT&#x27;s 95% interval" in html
