"""Schemas of what every family shares: the columns of a judge verdict, failures, plans, runs (each family's own
tables are declared in its folder, ``<family>/tables.py``)."""

import pyarrow as pa

TS = pa.timestamp("us", tz="UTC")

WRITTEN = [  # who wrote a row: the run, when, the config's backend and the engine's version (vLLM / transformers
    ("run_id", pa.string()),            # version; an endpoint's served model id and system_fingerprint; a game joins
    ("created_at", TS),                 # its players' distinct values with "; "). Null in files written before the
    ("backend", pa.string()),           # backend columns existed.
    ("backend_version", pa.string()),
]

VERDICTS = pa.schema([  # what every judge verdict stores; each protocol's table adds its own columns after these
    ("cell_key", pa.string()),
    ("protocol", pa.string()),           # the stage that asked (botchat_unieval, botchat_arena, mtbench101_judge, ...)
    ("protocol_version", pa.string()),   # its prompt / examples / parser version (part of the key)
    ("item_id", pa.string()),
    ("model", pa.string()),              # the judged model (pairwise: the side the row is filed under)
    ("judge", pa.string()),
    ("judge_fp", pa.string()),
    ("generation_key", pa.string()),     # the judged output's cell (a dialogue, an MT-Bench-101 answer)
    ("raw_output", pa.string()),
    ("parsed", pa.bool_()),
    ("parse_error", pa.string()),
    ("prompt_tokens", pa.int32()),
    ("completion_tokens", pa.int32()),
    *WRITTEN,
    # The output format the judge was held to by constrained decoding ("regex:unieval"), null when its
    # text was free (structured_outputs off, or a format its backend does not enforce).
    ("output_format", pa.string()),
])

FAILURES = pa.schema([
    ("cell_key", pa.string()),
    ("stage", pa.string()),
    ("item_id", pa.string()),
    ("model", pa.string()),
    ("judge", pa.string()),
    ("error", pa.string()),
    ("run_id", pa.string()),
    ("created_at", TS),
])

PLANS = pa.schema([  # the cells a run asked for: metrics read each model's most recent plan
    ("run_id", pa.string()),
    ("stage", pa.string()),
    ("cell_key", pa.string()),
    ("item_id", pa.string()),
    ("model", pa.string()),
    ("judge", pa.string()),
    ("created_at", TS),
    ("task", pa.string()),  # MT-Bench-101 task code of the item; null for other stages (and older files)
    ("roles", pa.map_(pa.string(), pa.string())),  # role → model of the cell ({"model": …}, {"first": …, "second": …},
                                                   # {"spy": …, "villager": …}); `model` is set when it has one model
    ("scope", pa.list_(pa.string())),  # what the plan is the latest one for: the cell's models, sorted, or [] (the stage)
    ("board", pa.string()),  # the board the run published to (null in older files: the `plans` view derives it)
])

BACKEND_CALLS = pa.schema([  # one backend call (a batch of conversations) of a stage's chunk: what `usage` sums
    ("run_id", pa.string()),
    ("stage", pa.string()),
    ("role", pa.string()),               # chatbot / judge / player
    ("model", pa.string()),
    ("backend", pa.string()),
    ("conversations", pa.int64()),       # the batch's conversations (requests to an endpoint)
    ("failed", pa.int64()),              # of which failed (after the backend's retries)
    ("prompt_tokens", pa.int64()),
    ("completion_tokens", pa.int64()),
    ("seconds", pa.float64()),           # wall time of the call
    ("cost", pa.float64()),              # from the model's prices per million tokens; null without them
    ("started_at", TS),
])

RUNS = pa.schema([
    ("run_id", pa.string()),
    ("stage", pa.string()),
    ("planned", pa.int64()),
    ("cached", pa.int64()),
    ("computed", pa.int64()),
    ("failed", pa.int64()),
    ("seconds", pa.float64()),
    ("started_at", TS),
    ("finished_at", TS),
    ("config", pa.string()),
    ("detail", pa.string()),
    ("blocked", pa.int64()),   # planned cells whose input is missing (a failed answer or dialogue); null in older files
    ("board", pa.string()),    # the board the run published to (null in older files: the `runs` view derives it)
    # what ran it (dialogbench/run/environment.py; null in older files): the code's git commit (else the installed
    # version), the packages' versions, the host and its GPUs
    ("commit", pa.string()),
    ("versions", pa.map_(pa.string(), pa.string())),
    ("host", pa.string()),
    ("gpu", pa.string()),
])
