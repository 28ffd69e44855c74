"""MT-Bench-101's lake tables: the models' answers, the judge's ratings of them."""

import pyarrow as pa

from dialogbench.cells import Table
from dialogbench.cells.shared_tables import verdict_table
from dialogbench.lake.schemas import WRITTEN

MTBENCH101_ANSWERS = pa.schema([  # one model answer to one MT-Bench-101 turn, given its context
    ("cell_key", pa.string()),       # protocol + answer version + item content + model config + context mode
    ("dialogue_id", pa.string()),
    ("task", pa.string()),
    ("turn", pa.int32()),            # 0-based, as in the dataset
    ("context", pa.string()),        # "golden" (the dataset's earlier turns) or "self" (the model's own answers)
    ("model", pa.string()),
    ("model_fp", pa.string()),
    ("answer", pa.string()),
    ("prompt_tokens", pa.int32()),
    ("completion_tokens", pa.int32()),
    *WRITTEN,
    ("question", pa.string()),       # the turn's user message, what the answer answers (null in older files)
    ("max_tokens", pa.int32()),      # the answer's token limit (mtbench101.answer_max_tokens as clamped, else the
                                     # model's max_tokens); completion_tokens reaching it: cut there (null in older
                                     # files)
])

ANSWERS_TABLE = Table("mtbench101_answers", MTBENCH101_ANSWERS, partition=("context", "model"), done="true")
RATINGS_TABLE = verdict_table("mtbench101_judgments", [
    ("score", pa.int32()),   # the judge's 1–10 rating of the turn; null when unparsed
    ("reference", pa.string()),  # MR, GR: the reference solution shown, 'dialogue' (the golden dialogue through the
                                 # turn's golden reply) or 'turn' (that reply alone); null for the other tasks and in
                                 # files written before it was kept (which all showed 'turn')
], answer=("score",))
TABLES = (ANSWERS_TABLE, RATINGS_TABLE)

# The stages' names, as every plans, runs and backend_calls row stores them (and the judge's verdicts, probes and
# findings as their `protocol`): "mtbench101_answer:<model>" per answering model, then the judge's. The judge stage was
# "mtbench101" before lake format 5 (legacy.py declares the rename, lake/renames.py makes it in stored rows).
ANSWER_STAGE = "mtbench101_answer"
JUDGE_STAGE = "mtbench101_judge"
