"""The CLI's leaderboards (and so the Prefect artifacts, which publish the same rows) show the latest run's 95%
intervals and rank ranges that ``stats.shown`` attaches to each family's rows."""

from __future__ import annotations

from dialogbench.botchat.leaderboard import format_leaderboard
from dialogbench.gameeval.leaderboard import format_gameeval, with_game_intervals
from dialogbench.mtbench101.leaderboard import format_mtbench101
from dialogbench.stats.shown import Shown


def headline(*rows: tuple) -> Shown:
    return Shown.from_rows([dict(zip(("leaderboard", "metric", "model", "slice", "raw_value", "raw_ci_low",
                                      "raw_ci_high", "rank", "rank_low", "rank_high"), r)) for r in rows])


def test_botchat_pass_rates_show_their_interval_and_the_top_ns_ranks():
    row = {"model": "a", "judge": "j", "dialogues": 20, "unparsed": 0, "pass@4": 0.75, "pass@4_ci_low": 0.55,
           "pass@4_ci_high": 0.9, "pass@4_ranks": "1-2", "pass@8": 0.5, "pass@8_ci_low": None,
           "pass@8_ci_high": None, "pass@8_ranks": None}
    line = next(line for line in format_leaderboard([row], [4, 8]).splitlines() if line.startswith("a "))
    assert line.split() == ["a", "-", "0.750", "[0.55,", "0.90]", "0.500", "20", "0"]
    assert format_leaderboard([{**row, "pass@8_ranks": "1-2"}], [4, 8]).splitlines()[3].split()[1] == "1-2"


def test_mtbench101_average_shows_its_interval_and_ranks():
    row = {"model": "a", "judge": "j", "avg": 6.5, "avg_ci_low": 6.1, "avg_ci_high": 6.9, "avg_ranks": "1-3",
           "unparsed": 0, "missing": 0}
    text = format_mtbench101([row])
    line = next(line for line in text.splitlines() if line.startswith("a "))
    assert line.split()[1] == "1-3" and "6.50  [6.10, 6.90]" in line
    assert "avg 95% CI: a bootstrap over the dialogues within each task" in text


def test_gameeval_rows_carry_the_interval_of_the_value_they_hold_and_the_cli_shows_it():
    found = headline(("gameeval_askguess", "st", "a", "setting=with_description", 50.0, 30.0, 70.0, 1, 1, 2),
                     ("gameeval_spyfall", "spy_win_rate", "a", "villager_model=b", 0.25, 0.0, 0.5, 1, 1, 1),
                     ("gameeval_tofukingdom", "win_rate", "a", "camp=prince", 0.5, 0.2, 0.8, 1, 1, 1),
                     ("gameeval_tofukingdom", "win_rate", "a", "camp=spy", 0.9, 0.2, 0.8, 1, 1, 1))  # stale
    ask = {"model": "a", "setting": "with_description", "words": 4, "trials": 8, "st": 50.0, "ee": 0.0, "rle": 0.0,
           "ame": 50.0, "ce": 0.0, "mean_rounds": 3.0, "missing": 0}
    spy = {"spy_model": "a", "villager_model": "b", "games": 8, "spy_wins": 2, "word_pairs": 2, "spy_win_rate": 0.25,
           "spy_living_rounds": 2.0, "spy_win_rate_published": 0.5, "spy_living_rounds_published": 4.0,
           "unfinished": 0, "discarded": 0, "chat_errors": 0, "missing": 0}
    tofu = [{"model": "a", "camp": camp, "points": 2, "games": 4, "unfinished": 0, "missing": 0}
            for camp in ("prince", "spy")]
    rows = with_game_intervals({"askguess": [ask], "spyfall": [spy], "tofukingdom": tofu}, found)
    assert (rows["askguess"][0]["st_ci_low"], rows["askguess"][0]["st_ranks"]) == (30.0, "1-2")
    assert rows["askguess"][0]["mean_rounds_ci_low"] is None
    assert [r["win_rate_ci_low"] for r in rows["tofukingdom"]] == [0.2, None]  # the spy camp's records 0.9, not 0.5
    text = format_gameeval(rows)
    assert "50.00 [30.00, 70.00]" in text and "0.25 [0.00, 0.50]" in text and "2/4 [0.20, 0.80]" in text
    assert next(line for line in text.splitlines() if line.startswith("a ")).split()[3] == "1-2"


def test_the_snapshot_ranks_measured_values_within_their_slice():
    """Rank 1 = best (lower is better for rounds), ties share the better rank; the range is what the intervals allow
    and always holds the rank; a value not measured, or none, has no rank and counts for no one."""
    from dialogbench.history.snapshot import ranked

    def row(model, value, low, high, slice_="s", measured=True):
        return {"model": model, "value": value, "ci_low": low, "ci_high": high, "slice": slice_,
                "measured": measured}

    rows = [row("a", 0.9, 0.8, 1.0), row("b", 0.85, 0.7, 0.95), row("c", 0.2, 0.1, 0.3), row("d", 0.85, None, None),
            row("e", 0.99, 0.9, 1.0, measured=False), row("f", None, None, None), row("g", 0.1, 0.0, 0.2, "t")]
    ranked(rows, higher_is_better=True)
    got = {r["model"]: (r["rank"], r["rank_low"], r["rank_high"]) for r in rows}
    assert got == {"a": (1, 1, 3), "b": (2, 1, 3), "c": (4, 3, 4), "d": (2, 1, 4), "e": (None, None, None),
                   "f": (None, None, None), "g": (1, 1, 1)}
    rounds = [row("a", 3.0, 2.5, 3.5), row("b", 6.0, 5.0, 7.0)]
    ranked(rounds, higher_is_better=False)
    assert [(r["rank"], r["rank_low"], r["rank_high"]) for r in rounds] == [(1, 1, 1), (2, 2, 2)]
