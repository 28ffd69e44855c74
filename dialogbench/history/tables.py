"""The history's lake tables: each run's metric snapshot and its effective config."""

import pyarrow as pa

from dialogbench.cells.tables import Table
from dialogbench.lake.schemas import TS

METRIC_SNAPSHOTS = pa.schema([  # every metric of every leaderboard row, as a run left the lake
    ("run_id", pa.string()),
    ("created_at", TS),
    ("family", pa.string()),
    ("board", pa.string()),       # the leaderboard view (botchat_unieval, mtbench101_tasks, gameeval_spyfall, ...)
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
])

RUN_CONFIGS = pa.schema([  # what a run ran with: the effective config (overrides applied), redacted
    ("run_id", pa.string()),
    ("created_at", TS),
    ("config_path", pa.string()),
    ("config_fp", pa.string()),
    ("config", pa.string()),      # YAML
])

METRIC_SNAPSHOTS_TABLE = Table("metric_snapshots", METRIC_SNAPSHOTS, partition=("run_id",))
RUN_CONFIGS_TABLE = Table("run_configs", RUN_CONFIGS, partition=("run_id",))
HISTORY_TABLES = (METRIC_SNAPSHOTS_TABLE, RUN_CONFIGS_TABLE)
