"""A lake at the papers' scale with every protocol on, for the report's layout checks: BotChat's 14 models
(``tests.fakes.synthetic_lake``), MT-Bench-101's 13 tasks for the same models (``mt_lake`` of the report tests) and
GameEval's three games among them (``gameeval_lake``'s row helpers: Ask-Guess in both settings, SpyFall for every
ordered pair on two word pairs, a TofuKingdom permutation per model). The names are the BotChat paper's, long ones
included, so that headers and model columns are as wide as a real report's."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from tests.fakes.synthetic_lake import synthetic_lake
from dialogbench.lake import Lake
from dialogbench.lake.schemas import RUNS
from tests.gameeval.test_views import NEW, askguess, at, gameeval_lake, plan_row, spyfall, tofu
from tests.report.test_report import mt_lake

# The 14 chatbots of BotChat's Table 2 (as its leaderboard names them)
PAPER_MODELS = ["gpt-4-0613", "gpt-3.5-turbo-0613", "claude-2", "InternLM-20B-chat", "Qwen-14B-chat",
                "Baichuan2-13B-chat", "ChatGLM2-6B", "Vicuna-13B-v1.5", "Vicuna-7B-v1.5", "Llama-2-70B-chat",
                "Llama-2-13B-chat", "Llama-2-7B-chat", "InternLM-7B-chat", "Qwen-7B-chat"]
WORD_PAIRS = ("lion,tiger", "iphone,ipad")


def gameeval_games(models: list[str]) -> list[dict]:
    """Played games of every GameEval game among ``models`` (deterministic; outcomes vary with the indices)."""
    games = []
    for i, m in enumerate(models):
        for setting in ("with_description", "without_description"):
            for w, word in enumerate(("apple", "bus")):
                games.append(askguess(m, word, setting, 1, ("ST", "EE", "RLE", "AME")[(i + w) % 4], 2 + (i + w) % 7))
    for i, spy in enumerate(models):
        for j, villager in enumerate(models):
            if i != j:
                for p, pair in enumerate(WORD_PAIRS):
                    games.append(spyfall(spy, villager, pair, 1, "spy" if (i + j + p) % 3 else "villagers",
                                         1 + (i * j + p) % 5))
    for i, prince in enumerate(models):
        spy, queen = models[(i + 1) % len(models)], models[(i + 2) % len(models)]
        for trial in (1, 2):
            games.append(tofu(prince, spy, queen, trial, ("prince", "spy", "queen")[(i + trial) % 3]))
    return games


def paper_lake(root: Path, models: list[str] = PAPER_MODELS) -> Lake:
    """Every protocol's tables for ``models`` in one lake under ``root``."""
    synthetic_lake(root, models=models, seeds=24, arena_seeds=6, seed=5)
    mt_lake(root, models=models)
    games = gameeval_games(models)
    lake = gameeval_lake(root, games, [plan_row(NEW, g["game"], g["cell_key"], g["item_id"], dict(g["assignment"]),
                                                at(1)) for g in games])
    # the three families' plans are one board's (the report reads one board): their runs ran bench.yaml too
    lake.write("runs", pa.Table.from_pylist([
        {"run_id": run, "stage": stage, "planned": 1, "cached": 0, "computed": 1, "failed": 0, "seconds": 1.0,
         "started_at": at(1), "finished_at": at(1), "config": "bench.yaml", "detail": "{}"}
        for run, stage in (("r1", "mtbench101_judge"), (NEW, "gameeval_askguess"))], schema=RUNS))
    return lake
