"""Length statistics: CL100K tokens of each generated utterance (the paper's Table 1), per generation cell."""

from __future__ import annotations

import logging
import time

import pyarrow as pa

from dialogbench.botchat.seeds import SEED_LENGTH
from dialogbench.lake import Lake
from dialogbench.lake.schemas import GENERATIONS, LENGTHS
from dialogbench.runs import StageReport, now
from dialogbench.tokenizers import cl100k

log = logging.getLogger("dialogbench.botchat.lengths")


def compute_lengths(*, lake: Lake) -> StageReport:
    """Token counts for every stored generation that has none yet (cached by generation key)."""
    start = time.perf_counter()
    with lake.connect() as con:
        todo = con.sql(f"""
            select g.cell_key, g.model, g.model_fp, g.item_id, g.utterances
            from {lake.relation_sql('generations', GENERATIONS)} g
            anti join {lake.relation_sql('utterance_lengths', LENGTHS)} l on g.cell_key = l.generation_key
        """).to_arrow_table().to_pylist()
        total = con.sql(f"select count(*) from {lake.relation_sql('generations', GENERATIONS)}").fetchall()[0][0]
    encoding, created = cl100k(), now()
    rows = [{"generation_key": g["cell_key"], "model": g["model"], "model_fp": g["model_fp"], "item_id": g["item_id"],
             "utterance": i + 1, "tokens": len(encoding.encode(text, disallowed_special=())), "created_at": created}
            for g in todo for i, text in enumerate(g["utterances"]) if i >= SEED_LENGTH]
    lake.write("utterance_lengths", pa.Table.from_pylist(rows, schema=LENGTHS))
    log.info("lengths: %d generations counted (%d utterances), %d cached", len(todo), len(rows), total - len(todo))
    return StageReport("botchat_lengths", planned=total, cached=total - len(todo), computed=len(todo),
                       seconds=time.perf_counter() - start)
