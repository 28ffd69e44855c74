"""The history's lake tables: each run's metric snapshot and its effective config."""

import pyarrow as pa

from dialogbench.cells.tables import Table
from dialogbench.lake.schemas import TS

METRIC_SNAPSHOTS = pa.schema([  # every metric of every leaderboard row, as a run left the lake
    ("run_id", pa.string()),
    ("created_at", TS),
    ("family", pa.string()),
    # the run's board (dialogbench/boards.py). In files written before boards existed this column held the leaderboard
    # view and `leaderboard` was absent: the metric_history view reads such rows as they were meant.
    ("board", pa.string()),
    ("metric", pa.string()),      # pass_rate, elo, score, spy_win_rate, ...
    ("model", pa.string()),
    ("slice", pa.string()),       # the row's other key columns, "judge=j, n=8" ('' when none)
    ("judge", pa.string()),       # the row's judge (null for unjudged metrics)
    ("value", pa.float64()),
    ("ci_low", pa.float64()),     # the metric's 95% interval (null when it has none)
    ("ci_high", pa.float64()),
    ("n", pa.int64()),            # the cells the value rests on (dialogues, comparisons, games, ...)
    ("model_fp", pa.string()),    # fingerprint of the configs of the row's models (null: not in this run's config)
    ("judge_fp", pa.string()),    # fingerprint of the judge's config
    ("prompt_fp", pa.string()),   # fingerprint of the family's prompts (and their parsers' versions)
    ("section_fp", pa.string()),  # fingerprint of the family's config section (limit, N, games, ...)
    ("config_fp", pa.string()),   # fingerprint of the run's whole effective config (run_configs.config)
    ("leaderboard", pa.string()), # the leaderboard view (botchat_unieval, mtbench101_tasks, gameeval_spyfall, ...)
    ("measured", pa.bool_()),     # false: its judge's verdicts could not be read or tell nothing apart (judge_health)
    ("complete", pa.bool_()),     # false: the value rests on part of its cells (some failed, are blocked or missing)
    ("note", pa.string()),        # why a value is not measured or not complete
])

RUN_CONFIGS = pa.schema([  # what a run ran with: the effective config (overrides applied), redacted
    ("run_id", pa.string()),
    ("created_at", TS),
    ("config_path", pa.string()),
    ("config_fp", pa.string()),
    ("config", pa.string()),      # YAML
    ("board", pa.string()),       # the board the run published to (null in files written before boards existed)
])

METRIC_SNAPSHOTS_TABLE = Table("metric_snapshots", METRIC_SNAPSHOTS, partition=("run_id",))
RUN_CONFIGS_TABLE = Table("run_configs", RUN_CONFIGS, partition=("run_id",))
HISTORY_TABLES = (METRIC_SNAPSHOTS_TABLE, RUN_CONFIGS_TABLE)
