"""The seed extraction stage: the dataset file → the ``seeds`` table, replaced only when it changed."""

from __future__ import annotations

import logging

from dialogbench.botchat.seeds import read_seeds
from dialogbench.botchat.tables import SEEDS_TABLE
from dialogbench.cells import Cell, Emit, Planned, Stage
from dialogbench.lake import Lake

log = logging.getLogger("dialogbench.botchat")


class ExtractSeeds(Stage):
    """A cell per ChatSEED; all are cached when the stored table equals the file's rows, else the
    table is replaced as a whole."""

    name = "extract_seeds"
    table = SEEDS_TABLE
    records_plan = False

    def plan(self, config, lake: Lake) -> Planned:
        seeds = read_seeds(config.botchat.dataset)
        with_gt = sum(n >= 4 for n in seeds.column("n_utterances").to_pylist())
        log.info("seeds: %d ChatSEEDs (%d with >= 4 human utterances)", seeds.num_rows, with_gt)
        cells = [Cell(fp, seed_id, payload=seeds) for fp, seed_id in
                 zip(seeds.column("item_fp").to_pylist(), seeds.column("seed_id").to_pylist())]
        stored = lake.has(self.table.name) and lake.read(self.table.name).sort_by("line").equals(seeds.sort_by("line"))
        return Planned(cells, detail={"with_4_or_more": with_gt},
                       todo=[] if stored else cells)

    def compute(self, config, cells: list[Cell], emit: Emit) -> None:
        seeds = cells[0].payload
        emit.lake.write(self.table.name, seeds, partition={"dataset": "mutual_test"}, name="seeds.parquet")
        emit.computed += len(cells)
