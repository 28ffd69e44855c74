"""Ratings from pairwise verdicts: BotChat's Bootstrap Elo and Bradley-Terry (Elo scale, bootstrap CIs)."""

from dialogbench.ratings.bradley_terry import BradleyTerry, bootstrap_bradley_terry, fit_bradley_terry
from dialogbench.ratings.elo import (BootstrapElo, RepeatedBootstrapElo, bootstrap_elo, elo_sequential,
                                     repeated_bootstrap_elo, shuffle_orders)
from dialogbench.ratings.games import ComparisonsError, Games, read_comparisons, win_rates

__all__ = [
    "BootstrapElo", "BradleyTerry", "ComparisonsError", "Games", "RepeatedBootstrapElo",
    "bootstrap_bradley_terry", "bootstrap_elo", "elo_sequential", "fit_bradley_terry", "read_comparisons",
    "repeated_bootstrap_elo", "shuffle_orders", "win_rates",
]
