"""Schemas of the lake tables (also used to give empty tables typed views)."""

import pyarrow as pa

TS = pa.timestamp("us", tz="UTC")

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
    ("run_id", pa.string()),
    ("created_at", TS),
])

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

TABLES = {"generations": GENERATIONS, "judgments": JUDGMENTS, "failures": FAILURES, "plans": PLANS, "runs": RUNS}
