"""The canary's lake table: one row per canary judgment per run, with the first night's answer beside it."""

import pyarrow as pa

from dialogbench.cells import Table
from dialogbench.lake.schemas import TS

CANARY = pa.schema([
    ("cell_key", pa.string()),           # the canary cell: fingerprint of the judgment it repeats (same every run)
    ("original_key", pa.string()),       # the judgment repeated (its verdict table's cell_key)
    ("stage", pa.string()),              # its judge stage (botchat_unieval, mtbench101_judge, ...)
    ("item_id", pa.string()),
    ("model", pa.string()),
    ("judge", pa.string()),
    ("judge_fp", pa.string()),
    ("answer", pa.string()),             # tonight's answer: the verdict table's answer columns, as JSON
    ("baseline", pa.string()),           # the first night's answer (the verdict stored in the cache), as JSON
    ("baseline_run_id", pa.string()),
    ("agrees", pa.bool_()),              # answer = baseline
    ("parsed", pa.bool_()),
    ("raw_output", pa.string()),
    ("baseline_raw_output", pa.string()),
    ("min_agreement", pa.float64()),     # the config's threshold when this run judged it
    ("run_id", pa.string()),
    ("created_at", TS),
])

# done: every row is a computed canary judgment. Its key is the same every run, so the `failures` view (what the next
# run retries) lists a failed one only until it is first computed; every run repeats the whole set anyway, and a run's
# own failures (its artifact, fail_on) count it.
# repeated: one row per run for each canary cell, which `dialogbench repair` must not take for duplicates.
CANARY_TABLE = Table("canary_judgments", CANARY, partition=("run_id",), done="true", repeated=True)
