"""The BotChat Arena stage: plan both orders of every (pair, seed, N) whose two dialogues are stored,
judge them in chunks, write cells. Ratings (Elo) are computed from the ``botchat_arena`` view."""

from __future__ import annotations

import itertools
import logging

import pyarrow as pa

from dialogbench.backends.formats import format_key
from dialogbench.botchat import arena, pairwise
from dialogbench.botchat.generate_stage import model_fingerprint
from dialogbench.botchat.pairwise import PairCell
from dialogbench.config import ModelConfig
from dialogbench.keys import fingerprint
from dialogbench.lake import Lake
from dialogbench.runs import StageReport

log = logging.getLogger("dialogbench.botchat.arena")
PROTOCOL = "botchat_arena"
PLAN_SEPARATOR = " vs "  # plans.model is "<first> vs <second>" (model names have no spaces)


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


def plan_arena(*, lake: Lake, models: list[ModelConfig], judge: ModelConfig, pairs: list[tuple[str, str]] | None,
               seeds: pa.Table, n_values: list[int], version: str,
               run_id: str) -> tuple[list[PairCell], int, int, dict[str, int]]:
    """Two cells (a first, then b first) per N, pair and seed where both models have a stored
    dialogue of >= N utterances (the shortest such, so a later extension does not change the cell).
    A seed where one side is missing is skipped and counted (returned per "a vs b @ N=n"). The key
    covers both generations and their order, so adding a model only plans its own pairs anew.
    Returns the cells still to judge, the planned and cached counts, and the skips; records the plan."""
    by_name = {m.name: m for m in models}
    pairs = _distinct(pairs) if pairs else default_pairs(models)
    item_ids = seeds.column("seed_id").to_pylist()
    stored = pairwise.stored_generations(lake, [by_name[n] for n in dict.fromkeys(itertools.chain(*pairs))], item_ids)
    judge_fp = model_fingerprint(judge)
    fmt = format_key(judge, arena.output_format(max_tokens=judge.max_tokens))
    cells: list[PairCell] = []
    skipped: dict[str, int] = {}
    for n in n_values:
        for a, b in pairs:
            compared = 0
            for item in item_ids:
                gen_a = next((g for g in stored.get((a, item), []) if g["n_target"] >= n), None)
                gen_b = next((g for g in stored.get((b, item), []) if g["n_target"] >= n), None)
                if gen_a is None or gen_b is None:
                    continue
                compared += 1
                for (first, g1), (second, g2) in (((a, gen_a), (b, gen_b)), ((b, gen_b), (a, gen_a))):
                    cells.append(PairCell(
                        cell_key=fingerprint(PROTOCOL, version, judge_fp, g1["cell_key"], g2["cell_key"], n, *fmt),
                        item_id=item, model=first, generation_key=g1["cell_key"], opponent=second,
                        opponent_generation_key=g2["cell_key"], position=1, n_judged=n,
                        first=tuple(g1["utterances"][:n]), second=tuple(g2["utterances"][:n]),
                        plan_label=f"{first}{PLAN_SEPARATOR}{second}"))
            skipped[f"{a} vs {b} @ N={n}"] = len(item_ids) - compared
            log.info("arena N=%d, pair %s vs %s: %d seeds compared, %d skipped (missing dialogues)",
                     n, a, b, compared, len(item_ids) - compared)
    missing = pairwise.record_plan(lake=lake, cells=cells, stage=PROTOCOL, judge=judge, run_id=run_id)
    todo = [c for c in cells if c.cell_key in missing]
    return todo, len(cells), len(cells) - len(todo), skipped


def judge_arena_chunk(*, lake: Lake, cells: list[PairCell], judge: ModelConfig, version: str,
                      run_id: str) -> StageReport:
    """One backend call for the chunk; rows into ``judgments`` with protocol ``botchat_arena``."""
    return pairwise.judge_pairs_chunk(lake=lake, cells=cells, judge=judge, kind="arena", protocol=PROTOCOL,
                                      version=version, run_id=run_id)
