"""The human labels' lake table: one row per label a person gave to a judged item (``labels.import_labels`` writes
it, one file per source, replaced by each import of that source; ``labels.human_pairs`` reads it)."""

import pyarrow as pa

from dialogbench.cells import Table
from dialogbench.lake.schemas import TS

LABELS = pa.schema([
    ("source", pa.string()),      # who labelled (the import's --source; default: the file's name without its suffix)
    ("judge", pa.string()),       # 'human:<source>': the name the labels are compared under (judge_pairs' judge_a/b)
    ("protocol", pa.string()),    # botchat_unieval, botchat_arena, botchat_gteval, mtbench101_judge
    ("item", pa.string()),        # judge_agreement_items.item: '<seed>:<model>@<n>', ...
    ("label", pa.string()),       # as the file gave it
    ("answer", pa.string()),      # in the judge's answer vocabulary (answers()): 'Yes 5', 'No', 'conversation_1', '7'
    ("score", pa.float64()),      # the rating (mtbench101_judge), else null
    ("row", pa.int64()),          # the file's row (1-based, a CSV's header is row 1) or line (JSONL)
    ("file", pa.string()),        # the file imported, as given
    ("imported_at", TS),
])

LABELS_TABLE = Table("judge_labels", LABELS)
