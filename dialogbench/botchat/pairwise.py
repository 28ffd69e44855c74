"""What BotChat Arena and GTEval share: the pair cell, the stored dialogues they read, the plan
record, and judging a chunk of pairs with one backend call."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import pyarrow as pa

from dialogbench.backends import get_backend, sampling_for
from dialogbench.backends.provenance import provenance
from dialogbench.botchat import arena
from dialogbench.botchat.generate_stage import model_fingerprint
from dialogbench.config import ModelConfig
from dialogbench.lake import Lake
from dialogbench.lake.schemas import FAILURES, GENERATIONS, JUDGMENTS, PLANS
from dialogbench.runs import StageReport, now

log = logging.getLogger("dialogbench.botchat.pairwise")


@dataclass(frozen=True)
class PairCell:
    """One judge call on two conversations, in one order (the mirror order is its own cell)."""

    cell_key: str
    item_id: str
    model: str                    # the side whose generation this cell is filed under
    generation_key: str
    opponent: str                 # the other model, or "human"
    opponent_generation_key: str | None
    position: int                 # 1: `model` is Conversation 1, 2: it is Conversation 2
    n_judged: int                 # utterances of each conversation shown
    first: tuple[str, ...]        # Conversation 1
    second: tuple[str, ...]       # Conversation 2
    plan_label: str               # `plans.model`: what the metrics take each latest plan per


def stored_generations(lake: Lake, models: list[ModelConfig], item_ids: list[str]) -> dict[tuple[str, str], list[dict]]:
    """Every stored dialogue of the models' *current* configs (joined on model_fp) for the items,
    per (model, item), shortest first (newest first among equal lengths)."""
    fps = pa.table({"model": [m.name for m in models], "model_fp": [model_fingerprint(m) for m in models]})
    with lake.connect() as con:
        con.register("fps", fps)
        con.register("items", pa.table({"item_id": pa.array(item_ids, pa.string())}))
        rows = con.sql(f"""
            SELECT g.cell_key, g.item_id, g.model, g.n_target, g.utterances
            FROM {lake.relation_sql('generations', GENERATIONS)} g
            JOIN fps USING (model, model_fp) SEMI JOIN items USING (item_id)
            ORDER BY g.model, g.item_id, g.n_target, g.created_at DESC, g.cell_key
        """).to_arrow_table().to_pylist()
    found: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        found.setdefault((row["model"], row["item_id"]), []).append(row)
    return found


def record_plan(*, lake: Lake, cells: list[PairCell], stage: str, judge: ModelConfig, run_id: str) -> set[str]:
    """Write the plan (metrics read each latest one) and return the keys not judged yet."""
    keys = pa.table({"cell_key": pa.array([c.cell_key for c in cells], pa.string())})
    with lake.connect() as con:
        con.register("planned", keys)
        missing = set(con.sql(f"""SELECT cell_key FROM planned ANTI JOIN
            {lake.relation_sql('judgments', JUDGMENTS)} j USING (cell_key)""").to_arrow_table().column(0).to_pylist())
    created = now()
    lake.write("plans", pa.Table.from_pylist(
        [{"run_id": run_id, "stage": stage, "cell_key": c.cell_key, "item_id": c.item_id, "model": c.plan_label,
          "judge": judge.name, "created_at": created} for c in cells], schema=PLANS),
        partition={"stage": stage, "run_id": run_id}, name=f"{judge.name}.parquet")
    return missing


def judge_pairs_chunk(*, lake: Lake, cells: list[PairCell], judge: ModelConfig, kind: arena.Kind, protocol: str,
                      version: str, run_id: str) -> StageReport:
    """One backend call for the chunk; parsed and unparseable verdicts are both cells (raw output
    kept, winner null when unparsed); backend errors go to ``failures`` and are retried next run."""
    start = time.perf_counter()
    completions = get_backend(judge).generate([arena.build_prompt(c.first, c.second, kind=kind) for c in cells],
                                              sampling=sampling_for(judge),
                                              formats=arena.output_format(max_tokens=judge.max_tokens))
    created, judge_fp = now(), model_fingerprint(judge)
    rows, failures = [], []
    for cell, completion in zip(cells, completions):
        if not completion.ok:
            failures.append({"cell_key": cell.cell_key, "stage": protocol, "item_id": cell.item_id, "model": cell.model,
                             "judge": judge.name, "error": completion.error, "run_id": run_id, "created_at": created})
            continue
        verdict = arena.parse_arena_verdict(completion.text)
        rows.append({"cell_key": cell.cell_key, "protocol": protocol, "protocol_version": version,
                     "item_id": cell.item_id, "model": cell.model, "judge": judge.name, "judge_fp": judge_fp,
                     "generation_key": cell.generation_key, "n_judged": cell.n_judged, "raw_output": completion.text,
                     "parsed": verdict.parsed, "parse_error": verdict.error, "reason": verdict.reason,
                     "prompt_tokens": completion.prompt_tokens, "completion_tokens": completion.completion_tokens,
                     "run_id": run_id, "created_at": created, "opponent": cell.opponent,
                     "opponent_generation_key": cell.opponent_generation_key, "position": cell.position,
                     "verdict": verdict.verdict, "winner": arena.winner_for(verdict.verdict),
                     "output_format": completion.constraint, **provenance(judge, [completion])})
    lake.write("judgments", pa.Table.from_pylist(rows, schema=JUDGMENTS), partition={"protocol": protocol, "judge": judge.name})
    lake.write("failures", pa.Table.from_pylist(failures, schema=FAILURES), partition={"stage": protocol})
    unparsed = sum(not r["parsed"] for r in rows)
    log.info("%s: %s judged %d pairs (%d unparseable, %d failed)", protocol, judge.name, len(rows), unparsed, len(failures))
    return StageReport(protocol, computed=len(rows), failed=len(failures), seconds=time.perf_counter() - start,
                       detail={"unparsed": unparsed, "constrained": sum(r["output_format"] is not None for r in rows)})
