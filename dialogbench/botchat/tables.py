"""BotChat's lake tables: the seeds, the dialogues, their utterance lengths, the judge's verdicts of each
protocol (UniEval, Arena, GTEval), the ratings."""

import pyarrow as pa

from dialogbench.cells import Table
from dialogbench.cells.shared_tables import verdict_table
from dialogbench.lake.schemas import TS, WRITTEN

SEEDS = pa.schema([  # one ChatSEED of MuTual-Test: the 2-utterance seed and the whole human dialogue
    ("seed_id", pa.string()),
    ("line", pa.int32()),
    ("seed", pa.list_(pa.string())),
    ("dialogue", pa.list_(pa.string())),
    ("n_utterances", pa.int32()),
    ("item_fp", pa.string()),
])

GENERATIONS = pa.schema([
    ("cell_key", pa.string()),         # dialogue_key + n_target
    ("dialogue_key", pa.string()),     # item + model config + protocol version (length-independent)
    ("protocol", pa.string()),
    ("item_id", pa.string()),
    ("model", pa.string()),
    ("model_fp", pa.string()),
    ("n_target", pa.int32()),
    ("utterances", pa.list_(pa.string())),  # the whole dialogue, seed included
    ("completion_tokens", pa.list_(pa.int32())),  # model tokens of each generated utterance
    ("empty_utterances", pa.int32()),
    ("trimmed_steps", pa.int32()),
    ("max_tokens", pa.int32()),  # the model's max_tokens per utterance (null in files written before it was kept)
    ("prompt_tokens", pa.list_(pa.int32())),  # prompt tokens of each generated utterance's call, aligned with
                                              # completion_tokens: null in files written before it was kept, a null
                                              # item for an utterance of a prefix stored before then
    *WRITTEN,
])

LENGTHS = pa.schema([  # CL100K tokens of each generated utterance (the seed's two are not counted)
    ("generation_key", pa.string()),
    ("model", pa.string()),
    ("model_fp", pa.string()),
    ("item_id", pa.string()),
    ("utterance", pa.int32()),   # 1-based position in the dialogue
    ("tokens", pa.int32()),
    ("created_at", TS),
])

ELO = pa.schema([  # arena ratings per run, (judge, N) and model: bootstrap Elo and Bradley–Terry
    ("run_id", pa.string()),
    ("judge", pa.string()),
    ("n", pa.int32()),
    ("model", pa.string()),
    ("elo", pa.float64()),       # mean over repeats of the bootstrap median (paper, appendix A)
    ("elo_std", pa.float64()),   # std of those medians across repeats
    ("ci_low", pa.float64()),    # 2.5th percentile of the pooled bootstrap rounds
    ("ci_high", pa.float64()),   # 97.5th percentile
    ("bt", pa.float64()),        # Bradley–Terry on the Elo scale (mean 1000)
    ("bt_ci_low", pa.float64()),
    ("bt_ci_high", pa.float64()),
    ("games", pa.int64()),
    ("settings", pa.string()),
    ("created_at", TS),
    ("board", pa.string()),      # the board of the run that computed them (null in older files: the `elo` view derives it)
])

UNIEVAL_VERDICT = [  # UniEval: is there an AI in the first n_judged utterances, and where does it first speak
    ("n_judged", pa.int32()),
    ("choice", pa.string()),      # "Yes" / "No"; null when unparsed
    ("ai_index", pa.int32()),     # 1-based utterance the judge flagged first; null for "No"
    ("reason", pa.string()),
]

# Arena and GTEval: one judge call on two conversations in one order. `model` / `generation_key` are one
# side, `opponent` / `opponent_generation_key` the other (the second model, or "human" with a null key in
# GTEval). `position`: where `model`'s conversation was shown (1 = "Conversation 1"; Arena rows always file
# the first-shown model as `model`, so 1). `verdict`: the conversation(s) the judge found AI involved
# (conversation_1 / conversation_2 / both / neither). `winner`: the side shown first is "model_a", the second
# "model_b"; the side NOT judged AI wins, both / neither is "tie"; null when unparsed.
PAIRWISE_VERDICT = [
    ("n_judged", pa.int32()),     # utterances of each conversation shown
    ("opponent", pa.string()),
    ("opponent_generation_key", pa.string()),
    ("position", pa.int32()),
    ("verdict", pa.string()),
    ("winner", pa.string()),
    ("reason", pa.string()),
]

SEEDS_TABLE = Table("seeds", SEEDS)
GENERATIONS_TABLE = Table("generations", GENERATIONS, partition=("protocol", "model"), done="true")
LENGTHS_TABLE = Table("utterance_lengths", LENGTHS, key="generation_key", done="true")
UNIEVAL_TABLE = verdict_table("unieval_judgments", UNIEVAL_VERDICT, answer=("choice", "ai_index"))
ARENA_TABLE = verdict_table("arena_judgments", PAIRWISE_VERDICT, answer=("verdict",))
GTEVAL_TABLE = verdict_table("gteval_judgments", PAIRWISE_VERDICT, answer=("verdict",))
ELO_TABLE = Table("elo", ELO, partition=("run_id",))  # derived per run: not a cell table
TABLES = (SEEDS_TABLE, GENERATIONS_TABLE, LENGTHS_TABLE, UNIEVAL_TABLE, ARENA_TABLE, GTEVAL_TABLE, ELO_TABLE)
