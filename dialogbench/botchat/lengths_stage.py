"""Length statistics: CL100K tokens of each generated utterance (the paper's Table 1), per generation cell."""

from __future__ import annotations

import logging

import pyarrow as pa

from dialogbench.botchat.seeds import SEED_LENGTH
from dialogbench.botchat.tables import GENERATIONS_TABLE, LENGTHS_TABLE
from dialogbench.cells import Cell, Emit, Planned, Stage
from dialogbench.lake import Lake
from dialogbench.run.runs import now
from dialogbench.backends.tokenizers import cl100k

log = logging.getLogger("dialogbench.botchat.lengths_stage")


class UtteranceLengths(Stage):
    """A cell per stored generation (its key is the generation's); computed once, whatever the config."""

    name = "botchat_lengths"
    table = LENGTHS_TABLE
    records_plan = False

    def plan(self, config, lake: Lake) -> Planned:
        with lake.connect() as con:
            rows = con.sql(f"""select cell_key, model, model_fp, item_id
                               from {lake.relation_sql(GENERATIONS_TABLE.name, GENERATIONS_TABLE.schema)}""").fetchall()
        return Planned([Cell(key, item, {"model": model}, payload=model_fp) for key, model, model_fp, item in rows])

    def compute(self, config, cells: list[Cell], emit: Emit) -> None:
        with emit.lake.connect() as con:  # only the chunk's generations are read in full
            con.register("chunk", pa.table({"cell_key": pa.array([c.key for c in cells], pa.string())}))
            utterances = dict(con.sql(f"""select g.cell_key, g.utterances from
                {emit.lake.relation_sql(GENERATIONS_TABLE.name, GENERATIONS_TABLE.schema)} g
                semi join chunk using (cell_key)""").fetchall())
        encoding, created = cl100k(), now()
        rows = [{"generation_key": c.key, "model": c.model, "model_fp": c.payload, "item_id": c.item_id,
                 "utterance": i + 1, "tokens": len(encoding.encode(text, disallowed_special=())), "created_at": created}
                for c in cells for i, text in enumerate(utterances[c.key]) if i >= SEED_LENGTH]
        emit(rows, computed=len(cells))
        log.info("lengths: %d generations counted (%d utterances)", len(cells), len(rows))
