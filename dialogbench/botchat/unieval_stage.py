"""The UniEval stage: plan judgments of the latest dialogues, judge them in chunks, write cells."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import pyarrow as pa

from dialogbench.backends import get_backend, sampling_for
from dialogbench.backends.formats import format_key
from dialogbench.backends.provenance import provenance
from dialogbench.botchat.generate_stage import model_fingerprint
from dialogbench.botchat.unieval import build_prompt, output_format, parse_verdict
from dialogbench.config import ModelConfig
from dialogbench.keys import fingerprint
from dialogbench.lake import Lake
from dialogbench.lake.schemas import FAILURES, GENERATIONS, JUDGMENTS, PLANS
from dialogbench.runs import StageReport, now

log = logging.getLogger("dialogbench.botchat.unieval")
PROTOCOL = "botchat_unieval"


@dataclass(frozen=True)
class JudgeCell:
    cell_key: str
    item_id: str
    model: str
    generation_key: str
    utterances: tuple[str, ...]  # the dialogue cut to n_judged


def plan_unieval(*, lake: Lake, models: list[ModelConfig], judge: ModelConfig, item_ids: list[str],
                 n_judged: int, version: str, run_id: str) -> tuple[list[JudgeCell], int, int]:
    """Cells for the stored generation of each (model, item) that is long enough (the shortest such,
    so a later, longer extension does not change the cell); returns the missing cells and the planned
    and cached counts, and records the plan (metrics report each model's latest plan). Dialogues not
    generated yet are not planned."""
    judge_fp = model_fingerprint(judge)
    fps = pa.table({"model": [m.name for m in models], "model_fp": [model_fingerprint(m) for m in models]})
    items = pa.table({"item_id": item_ids})
    with lake.connect() as con:
        con.register("fps", fps)
        con.register("items", items)
        gens = con.sql(f"""
            SELECT g.cell_key, g.item_id, g.model, g.utterances FROM {lake.relation_sql('generations', GENERATIONS)} g
            JOIN fps USING (model, model_fp) SEMI JOIN items USING (item_id)
            WHERE g.n_target >= {int(n_judged)}
            QUALIFY row_number() OVER (PARTITION BY g.model, g.item_id ORDER BY g.n_target, g.created_at DESC) = 1
        """).to_arrow_table()
        fmt = format_key(judge, output_format(n_utterances=n_judged, max_tokens=judge.max_tokens))
        cells = [JudgeCell(cell_key=fingerprint(PROTOCOL, version, judge_fp, g["cell_key"], n_judged, *fmt),
                           item_id=g["item_id"], model=g["model"], generation_key=g["cell_key"],
                           utterances=tuple(g["utterances"][:n_judged])) for g in gens.to_pylist()]
        con.register("planned", pa.table({"cell_key": [c.cell_key for c in cells]}, schema=pa.schema([("cell_key", pa.string())])))
        missing = set(con.sql(f"""SELECT cell_key FROM planned ANTI JOIN
            {lake.relation_sql('judgments', JUDGMENTS)} j USING (cell_key)""").to_arrow_table().column(0).to_pylist())
    todo = [c for c in cells if c.cell_key in missing]
    created = now()
    lake.write("plans", pa.Table.from_pylist(
        [{"run_id": run_id, "stage": PROTOCOL, "cell_key": c.cell_key, "item_id": c.item_id, "model": c.model,
          "judge": judge.name, "created_at": created} for c in cells], schema=PLANS),
        partition={"stage": PROTOCOL, "run_id": run_id}, name=f"{judge.name}.parquet")
    return todo, len(cells), len(cells) - len(todo)


def judge_unieval_chunk(*, lake: Lake, cells: list[JudgeCell], judge: ModelConfig, examples: list[dict],
                        n_judged: int, version: str, run_id: str) -> StageReport:
    """One backend call for the chunk; parsed and unparseable verdicts are both cells (with the raw
    output); backend errors go to ``failures`` and are retried on the next run."""
    start = time.perf_counter()
    backend = get_backend(judge)
    formats = [output_format(n_utterances=len(c.utterances), max_tokens=judge.max_tokens) for c in cells]
    completions = backend.generate([build_prompt(c.utterances, examples) for c in cells], sampling=sampling_for(judge),
                                   formats=formats)
    created, judge_fp = now(), model_fingerprint(judge)
    rows, failures = [], []
    for cell, completion in zip(cells, completions):
        if not completion.ok:
            failures.append({"cell_key": cell.cell_key, "stage": PROTOCOL, "item_id": cell.item_id, "model": cell.model,
                             "judge": judge.name, "error": completion.error, "run_id": run_id, "created_at": created})
            continue
        verdict = parse_verdict(completion.text, n_utterances=len(cell.utterances))
        rows.append({"cell_key": cell.cell_key, "protocol": PROTOCOL, "protocol_version": version,
                     "item_id": cell.item_id, "model": cell.model, "judge": judge.name, "judge_fp": judge_fp,
                     "generation_key": cell.generation_key, "n_judged": n_judged, "raw_output": completion.text,
                     "parsed": verdict.parsed, "parse_error": verdict.error, "choice": verdict.choice,
                     "ai_index": verdict.index, "reason": verdict.reason, "prompt_tokens": completion.prompt_tokens,
                     "completion_tokens": completion.completion_tokens, "run_id": run_id, "created_at": created,
                     "output_format": completion.constraint, **provenance(judge, [completion])})
    lake.write("judgments", pa.Table.from_pylist(rows, schema=JUDGMENTS), partition={"protocol": PROTOCOL, "judge": judge.name})
    lake.write("failures", pa.Table.from_pylist(failures, schema=FAILURES), partition={"stage": PROTOCOL})
    unparsed = sum(not r["parsed"] for r in rows)
    log.info("%s: judged %d dialogues (%d unparseable, %d failed)", judge.name, len(rows), unparsed, len(failures))
    return StageReport(PROTOCOL, computed=len(rows), failed=len(failures), seconds=time.perf_counter() - start,
                       detail={"unparsed": unparsed, "constrained": sum(r["output_format"] is not None for r in rows)})
