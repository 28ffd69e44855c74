"""The BotChat Arena stage: both orders of every (pair, seed, N) whose two dialogues are stored, judged
in chunks. Ratings (Elo) are computed from the ``botchat_arena`` view."""

from __future__ import annotations

import itertools
import logging

import pyarrow as pa

from dialogbench.backends.formats import format_key
from dialogbench.botchat import arena, pairwise_stage
from dialogbench.botchat.config import chatbots
from dialogbench.botchat.pairwise_stage import Pair, PairwiseStage
from dialogbench.botchat.tables import ARENA_TABLE
from dialogbench.cells import Cell
from dialogbench.run.config import ModelConfig
from dialogbench.cells.keys import fingerprint, model_fingerprint
from dialogbench.lake import Lake

log = logging.getLogger("dialogbench.botchat.arena")
PROTOCOL = "botchat_arena"


def default_pairs(models: list[ModelConfig]) -> list[tuple[str, str]]:
    """Every unordered pair of the botchat models, in config order."""
    return list(itertools.combinations([m.name for m in models], 2))


def _distinct(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Listed pairs without repeats: (b, a) after (a, b) would plan the same cells twice."""
    seen: set[frozenset[str]] = set()
    kept = []
    for a, b in pairs:
        if frozenset((a, b)) not in seen:
            seen.add(frozenset((a, b)))
            kept.append((a, b))
    return kept


class Arena(PairwiseStage):
    """Two cells (a first, then b first) per N, pair and seed where both models have a stored dialogue
    of >= N utterances (the shortest such, so a later extension does not change the cell). A seed
    where one side is missing is skipped and counted (per "a vs b @ N=n"). The key covers both
    generations and their order, so adding a model only plans its own pairs anew."""

    name = PROTOCOL
    kind = "arena"
    table = ARENA_TABLE

    def pairs(self, config, lake: Lake, seeds: pa.Table, judge: ModelConfig) -> tuple[list[Cell], dict[str, int]]:
        models, settings = chatbots(config), config.botchat.arena
        by_name = {m.name: m for m in models}
        pairs = _distinct(settings.pairs) if settings.pairs else default_pairs(models)
        item_ids = seeds.column("seed_id").to_pylist()
        sides = [by_name[n] for n in dict.fromkeys(itertools.chain(*pairs))]
        stored = pairwise_stage.stored_generations(lake, sides, item_ids)
        judge_fp, version = model_fingerprint(judge), arena.protocol_version("arena")
        fmt = format_key(judge, arena.output_format(max_tokens=judge.max_tokens))
        cells: list[Cell] = []
        skipped: dict[str, int] = {}
        for n in settings.n:
            for a, b in pairs:
                compared = 0
                for item in item_ids:
                    gen_a = next((g for g in stored.get((a, item), []) if g["n_target"] >= n), None)
                    gen_b = next((g for g in stored.get((b, item), []) if g["n_target"] >= n), None)
                    if gen_a is None or gen_b is None:
                        continue
                    compared += 1
                    for (first, g1), (second, g2) in (((a, gen_a), (b, gen_b)), ((b, gen_b), (a, gen_a))):
                        cells.append(Cell(
                            fingerprint(PROTOCOL, version, judge_fp, g1["cell_key"], g2["cell_key"], n, *fmt), item,
                            {"first": first, "second": second}, judge=judge.name,
                            payload=Pair(model=first, generation_key=g1["cell_key"], opponent=second,
                                         opponent_generation_key=g2["cell_key"], position=1, n_judged=n,
                                         first=tuple(g1["utterances"][:n]), second=tuple(g2["utterances"][:n]))))
                skipped[f"{a} vs {b} @ N={n}"] = len(item_ids) - compared
                log.info("arena N=%d, pair %s vs %s: %d seeds compared, %d skipped (missing dialogues)",
                         n, a, b, compared, len(item_ids) - compared)
        return cells, skipped
