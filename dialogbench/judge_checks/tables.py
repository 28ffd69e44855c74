"""The known-answer probes' lake table: one row per probe a judge answered."""

import pyarrow as pa

from dialogbench.cells import Table
from dialogbench.judge_checks.label_tables import LABELS_TABLE
from dialogbench.lake.schemas import WRITTEN

PROBES = pa.schema([
    ("cell_key", pa.string()),           # probe stage + protocol version + judge config + probe content + format
    ("protocol", pa.string()),           # the judge protocol probed (botchat_unieval, mtbench101_judge, ...)
    ("protocol_version", pa.string()),
    ("probe_id", pa.string()),           # stable: the dataset item and what was altered ("MT-12/ai@5")
    ("kind", pa.string()),               # human, ai_marked, human_vs_ai, golden_vs_useless; hard: right_vs_wrong, golden_vs_wrong
    ("variant", pa.string()),            # the side or order (human_first, ai_first, golden, useless; right_first, wrong_first, wrong, a mark)
    ("expected", pa.string()),           # the right answer, in words ("no AI", "AI at 5", "the human wins", "higher")
    ("pair_id", pa.string()),            # probes graded as a pair (a rating above another): both cells share it
    ("longer", pa.string()),             # a pair's longer side in characters: 'expected' (the side that should win
                                         # or rate higher), 'other'; null when as long, not a pair, or older files
    ("judge", pa.string()),
    ("judge_fp", pa.string()),
    ("raw_output", pa.string()),
    ("parsed", pa.bool_()),
    ("answer", pa.string()),             # what the judge answered, as parsed ("Yes 5", "conversation_2", "7")
    ("correct", pa.bool_()),             # the answer is the expected one (null for pair-graded cells: see the view)
    ("index_right", pa.bool_()),         # UniEval: the AI utterance flagged at its index (null otherwise)
    ("score", pa.float64()),             # a rating (pair-graded probes compare them)
    ("prompt_tokens", pa.int32()),
    ("completion_tokens", pa.int32()),
    *WRITTEN,
])

PROBES_TABLE = Table("judge_probes", PROBES, partition=("protocol",), done="true")
TABLES = (PROBES_TABLE, LABELS_TABLE)
