"""Which ChatSEEDs a run uses: the stored seeds (``botchat.limit``), and the comparison subsets."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from dialogbench.botchat.tables import SEEDS_TABLE
from dialogbench.lake import Lake


def selected_seeds(config, lake: Lake) -> pa.Table:
    """The seeds extracted into ``lake`` (the run's), in file order, the first ``botchat.limit`` of them."""
    seeds = lake.read(SEEDS_TABLE.name, SEEDS_TABLE.schema).sort_by("line")
    return seeds.slice(0, config.botchat.limit) if config.botchat.limit else seeds


def comparison_seeds(config, lake: Lake, *, min_human_utterances: int, limit: int | None) -> pa.Table:
    """The selected seeds whose human dialogue has >= ``min_human_utterances`` (the paper's 222 with 4),
    the first ``limit`` of them."""
    seeds = selected_seeds(config, lake)
    seeds = seeds.filter(pc.greater_equal(seeds.column("n_utterances"), min_human_utterances))
    return seeds.slice(0, limit) if limit else seeds
