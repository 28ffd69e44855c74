"""What BotChat Arena and GTEval share: the pair a cell shows the judge, the stored dialogues they read,
and the stage that plans pairs per seed and judges them in chunks."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import pyarrow as pa

from dialogbench.botchat import arena
from dialogbench.botchat.selection import comparison_seeds
from dialogbench.botchat.tables import GENERATIONS_TABLE
from dialogbench.botchat.unieval import typical_verdict_tokens
from dialogbench.cells import Cell, Emit, Planned
from dialogbench.run.config import ModelConfig
from dialogbench.cells.judging import JudgeStage, judge_chunk
from dialogbench.cells.keys import model_fingerprint
from dialogbench.lake import Lake

log = logging.getLogger("dialogbench.botchat.pairwise_stage")


@dataclass(frozen=True)
class Pair:
    """One judge call on two conversations, in one order (the mirror order is its own cell)."""

    model: str                    # the side whose generation the row is filed under
    generation_key: str
    opponent: str                 # the other model, or "human"
    opponent_generation_key: str | None
    position: int                 # 1: `model` is Conversation 1, 2: it is Conversation 2
    n_judged: int                 # utterances of each conversation shown
    first: tuple[str, ...]        # Conversation 1
    second: tuple[str, ...]       # Conversation 2


def stored_generations(lake: Lake, models: list[ModelConfig], item_ids: list[str]) -> dict[tuple[str, str], list[dict]]:
    """Every stored dialogue of the models' *current* configs (joined on model_fp) for the items,
    per (model, item), shortest first (newest first among equal lengths)."""
    fps = pa.table({"model": [m.name for m in models], "model_fp": [model_fingerprint(m) for m in models]})
    with lake.connect() as con:
        con.register("fps", fps)
        con.register("items", pa.table({"item_id": pa.array(item_ids, pa.string())}))
        rows = con.sql(f"""
            SELECT g.cell_key, g.item_id, g.model, g.n_target, g.utterances
            FROM {lake.relation_sql(GENERATIONS_TABLE.name, GENERATIONS_TABLE.schema)} g
            JOIN fps USING (model, model_fp) SEMI JOIN items USING (item_id)
            ORDER BY g.model, g.item_id, g.n_target, g.created_at DESC, g.cell_key
        """).to_arrow_table().to_pylist()
    found: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        found.setdefault((row["model"], row["item_id"]), []).append(row)
    return found


class PairwiseStage(JudgeStage):
    """Arena and GTEval: cells planned per comparison seed by ``pairs``; judged in chunks."""

    kind: arena.Kind

    def __init__(self, config, *, judge: str | None = None) -> None:
        """``judge``: another judge than ``botchat.judge`` (an agreement judge's stage: ``agreement()``)."""
        super().__init__(judge=config.model(judge or config.botchat.judge), chunk_size=config.botchat.judge_chunk_size)

    def settings(self, config):
        return getattr(config.botchat, self.kind)

    def typical_tokens_per_cell(self, config) -> float | None:
        """A verdict (``Choice: …``, ``Reason: …``) as long as the authors' UniEval examples' choice and reason: the
        same authors' judge, asked for a choice and a reason in the same style."""
        return typical_verdict_tokens(config.botchat.unieval_examples, cap=self.judge.max_tokens, choice=False)

    def pairs(self, config, lake: Lake, seeds: pa.Table, judge: ModelConfig) -> tuple[list[Cell], dict[str, int]]:
        raise NotImplementedError

    def plan(self, config, lake: Lake) -> Planned:
        settings = self.settings(config)
        seeds = comparison_seeds(config, lake, min_human_utterances=settings.min_human_utterances, limit=settings.limit)
        cells, skipped = self.pairs(config, lake, seeds, self.judge)
        # a seed skipped for a missing dialogue is two cells (both orders) that cannot be keyed yet: blocked
        return Planned(cells, detail={"skipped_missing_dialogues": sum(skipped.values()), "skipped": skipped},
                       unplanned=2 * sum(skipped.values()))

    def compute(self, config, cells: list[Cell], emit: Emit) -> None:
        judge, version = self.judge, arena.protocol_version(self.kind)

        def parse(cell: Cell, text: str) -> dict:
            verdict, pair = arena.parse_arena_verdict(text), cell.payload
            return {"protocol_version": version, "n_judged": pair.n_judged, "parsed": verdict.parsed,
                    "parse_error": verdict.error, "reason": verdict.reason, "opponent": pair.opponent,
                    "opponent_generation_key": pair.opponent_generation_key, "position": pair.position,
                    "verdict": verdict.verdict, "winner": arena.winner_for(verdict.verdict)}

        judge_chunk(judge=judge, cells=cells, emit=emit, protocol=self.lake_name, parse=parse,
                    prompt=lambda c: arena.build_prompt(c.payload.first, c.payload.second, kind=self.kind),
                    output_format=lambda c: arena.output_format(max_tokens=judge.max_tokens))
