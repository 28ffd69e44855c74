"""Schemas of the lake tables every family shares: judgments, failures, plans, runs (each family's own
tables are declared in its folder, ``<family>/tables.py``)."""

import pyarrow as pa

TS = pa.timestamp("us", tz="UTC")

JUDGMENTS = pa.schema([
    ("cell_key", pa.string()),
    ("protocol", pa.string()),
    ("protocol_version", pa.string()),
    ("item_id", pa.string()),
    ("model", pa.string()),
    ("judge", pa.string()),
    ("judge_fp", pa.string()),
    ("generation_key", pa.string()),
    ("n_judged", pa.int32()),
    ("raw_output", pa.string()),
    ("parsed", pa.bool_()),
    ("parse_error", pa.string()),
    ("choice", pa.string()),
    ("ai_index", pa.int32()),
    ("reason", pa.string()),
    ("prompt_tokens", pa.int32()),
    ("completion_tokens", pa.int32()),
    ("run_id", pa.string()),
    ("created_at", TS),
    # Pairwise protocols (botchat_arena, botchat_gteval); null for UniEval rows and in older files.
    # `model` / `generation_key` are one side, `opponent` / `opponent_generation_key` the other (the
    # second model, or "human" with a null key in GTEval). `position` is where `model`'s conversation
    # was shown: 1 = "Conversation 1", 2 = "Conversation 2" (Arena rows always store the first-shown
    # model as `model`, so 1). `verdict`: the conversation(s) the judge found AI involved
    # (conversation_1 / conversation_2 / both / neither). `winner`: the side shown FIRST is "model_a",
    # the second "model_b"; the side NOT judged AI wins, both / neither is "tie"; null when unparsed.
    ("opponent", pa.string()),
    ("opponent_generation_key", pa.string()),
    ("position", pa.int32()),
    ("verdict", pa.string()),
    ("winner", pa.string()),
    # MT-Bench-101 (protocol "mtbench101"): the judge's 1–10 rating of one turn, null when unparsed
    # and for every other protocol (older files lack the column; reads use union_by_name).
    ("score", pa.int32()),
    # Provenance: the config's backend and the engine's version (vLLM / transformers version; an
    # endpoint's served model id and system_fingerprint). Null in files written before they existed.
    ("backend", pa.string()),
    ("backend_version", pa.string()),
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
])
