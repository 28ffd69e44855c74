"""The UniEval stage: judge the stored dialogue of each (model, seed) cut to N, in chunks."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from dialogbench.backends.formats import format_key
from dialogbench.botchat.config import chatbots
from dialogbench.botchat.selection import selected_seeds
from dialogbench.botchat.tables import GENERATIONS_TABLE, UNIEVAL_TABLE
from dialogbench.botchat.unieval import (build_prompt, load_examples, output_format, parse_verdict, protocol_version,
                                         typical_verdict_tokens)
from dialogbench.cells import Cell, Emit, Planned
from dialogbench.cells.judging import JudgeStage, judge_chunk
from dialogbench.cells.keys import fingerprint, model_fingerprint
from dialogbench.lake import Lake

PROTOCOL = "botchat_unieval"


@dataclass(frozen=True)
class Dialogue:
    """What a UniEval cell judges: one stored dialogue of ``model``, cut to the judged length."""

    model: str
    generation_key: str
    utterances: tuple[str, ...]


class UniEval(JudgeStage):
    name = PROTOCOL
    table = UNIEVAL_TABLE

    def __init__(self, config, *, judge: str | None = None) -> None:
        """``judge``: another judge than ``botchat.judge`` (an agreement judge's stage: ``agreement()``)."""
        super().__init__(judge=config.model(judge or config.botchat.judge), chunk_size=config.botchat.judge_chunk_size)

    def typical_tokens_per_cell(self, config) -> float | None:
        """A verdict as long as the in-context examples' answers (``Choice: …``, ``Index: …``, ``Reason: …``)."""
        return typical_verdict_tokens(config.botchat.unieval_examples, cap=self.judge.max_tokens)

    def plan(self, config, lake: Lake) -> Planned:
        """A cell per stored generation of each (model, item) long enough for ``n_max`` (the shortest
        such, so a later, longer extension does not change the cell). Dialogues not generated yet are
        not planned."""
        judge, n_judged = self.judge, config.botchat.n_max
        version = protocol_version(load_examples(config.botchat.unieval_examples))
        models = chatbots(config)
        fps = pa.table({"model": [m.name for m in models], "model_fp": [model_fingerprint(m) for m in models]})
        items = pa.table({"item_id": selected_seeds(config, lake).column("seed_id")})
        with lake.connect() as con:
            con.register("fps", fps)
            con.register("items", items)
            gens = con.sql(f"""
                SELECT g.cell_key, g.item_id, g.model, g.utterances
                FROM {lake.relation_sql(GENERATIONS_TABLE.name, GENERATIONS_TABLE.schema)} g
                JOIN fps USING (model, model_fp) SEMI JOIN items USING (item_id)
                WHERE g.n_target >= {int(n_judged)}
                QUALIFY row_number() OVER (PARTITION BY g.model, g.item_id ORDER BY g.n_target, g.created_at DESC) = 1
            """).to_arrow_table().to_pylist()
        fmt = format_key(judge, output_format(n_utterances=n_judged, max_tokens=judge.max_tokens))
        judge_fp = model_fingerprint(judge)
        # a (model, seed) without a long enough dialogue cannot be keyed (the key covers the dialogue's): blocked
        unplanned = len(models) * items.num_rows - len(gens)
        return Planned(unplanned=unplanned, cells=[Cell(fingerprint(PROTOCOL, version, judge_fp, g["cell_key"], n_judged, *fmt), g["item_id"],
                             {"model": g["model"]}, judge=judge.name,
                             payload=Dialogue(g["model"], g["cell_key"], tuple(g["utterances"][:n_judged])))
                        for g in gens])

    def compute(self, config, cells: list[Cell], emit: Emit) -> None:
        judge, examples = self.judge, load_examples(config.botchat.unieval_examples)
        version = protocol_version(examples)

        def parse(cell: Cell, text: str) -> dict:
            verdict = parse_verdict(text, n_utterances=len(cell.payload.utterances))
            return {"protocol_version": version, "n_judged": config.botchat.n_max, "parsed": verdict.parsed,
                    "parse_error": verdict.error, "choice": verdict.choice, "ai_index": verdict.index,
                    "reason": verdict.reason}

        judge_chunk(judge=judge, cells=cells, emit=emit, protocol=PROTOCOL,
                    prompt=lambda c: build_prompt(c.payload.utterances, examples),
                    output_format=lambda c: output_format(n_utterances=len(c.payload.utterances),
                                                          max_tokens=judge.max_tokens),
                    parse=parse)
