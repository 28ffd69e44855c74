"""The history's lake tables: each run's metric snapshot and its effective config."""

import pyarrow as pa

from dialogbench.cells.tables import Table
from dialogbench.lake.schemas import TS

METRIC_SNAPSHOTS = pa.schema([  # every metric of every leaderboard row, as a run left the lake
    ("run_id", pa.string()),
    ("created_at", TS),
    ("family", pa.string()),
    # the run's board (dialogbench/run/boards.py). In files written before boards existed this column held the leaderboard
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
    # its rank among the measured values of its (leaderboard, metric, slice) (1 = best; a tie shares the better
    # rank) and its rank range: the ranks its 95% interval allows (Chatbot Arena's rule, stats.bootstrap.rank_ranges)
    ("rank", pa.int64()),
    ("rank_low", pa.int64()),
    ("rank_high", pa.int64()),
])

RUN_CONFIGS = pa.schema([  # what a run ran with: the effective config (overrides applied), redacted
    ("run_id", pa.string()),
    ("created_at", TS),
    ("config_path", pa.string()),
    ("config_fp", pa.string()),
    ("config", pa.string()),      # YAML
    ("board", pa.string()),       # the board the run published to (null in files written before boards existed)
])

METRIC_PAIRS = pa.schema([  # who is really ahead: every pair of models on every metric with units (dialogbench/stats)
    ("run_id", pa.string()),
    ("created_at", TS),
    ("board", pa.string()),
    ("family", pa.string()),
    ("leaderboard", pa.string()),
    ("metric", pa.string()),
    ("slice", pa.string()),       # the other key columns, "judge=j, n=8", as metric_snapshots.slice
    ("model_a", pa.string()),
    ("model_b", pa.string()),
    ("value_a", pa.float64()),    # each model's number on the units both have (not the leaderboard's, on all of its)
    ("value_b", pa.float64()),
    ("difference", pa.float64()), # value_a - value_b
    ("ci_low", pa.float64()),     # its 95% paired-bootstrap interval (null: too few shared units)
    ("ci_high", pa.float64()),
    ("p", pa.float64()),          # two-sided bootstrap p of no difference
    ("p_holm", pa.float64()),     # p, Holm-adjusted over the pairs of this (metric, slice)
    ("shared", pa.int64()),       # the units (seeds, dialogues, words, games) both have
    ("rounds", pa.int64()),
    ("verdict", pa.string()),     # "<model> ahead", "within noise", "cannot tell (...)", "not measured (...)"
    ("higher_is_better", pa.bool_()),
])

METRIC_UNITS = pa.schema([  # the units each series' number was a mean of, as the run read them (dialogbench/stats)
    ("run_id", pa.string()),
    ("board", pa.string()),
    ("family", pa.string()),
    ("leaderboard", pa.string()),
    ("metric", pa.string()),
    ("model", pa.string()),
    ("slice", pa.string()),
    ("stratum", pa.string()),     # MT-Bench-101's task for its average ('' when the number has one stratum)
    ("cluster", pa.string()),     # the unit: a seed, a dialogue, a word, a word pair, a game
    ("value", pa.float64()),
    ("weight", pa.float64()),
])

METRIC_CHANGES = pa.schema([  # each series against its previous value on the units both nights have
    ("run_id", pa.string()),
    ("family", pa.string()),
    ("leaderboard", pa.string()),
    ("metric", pa.string()),
    ("model", pa.string()),
    ("slice", pa.string()),
    ("previous_run_id", pa.string()),
    ("shared", pa.int64()),       # the units both nights have
    ("shared_value", pa.float64()),     # tonight's number on them
    ("shared_previous", pa.float64()),  # the previous night's
    ("shared_delta", pa.float64()),     # shared_value - shared_previous
    ("ci_low", pa.float64()),     # its 95% paired-bootstrap interval (null: too few shared units)
    ("ci_high", pa.float64()),
    ("p", pa.float64()),          # two-sided bootstrap p of no change
    ("note", pa.string()),        # why there is no interval
])

JUDGE_FINDINGS = pa.schema([  # the (judge, protocol) pairs whose numbers the run refused: its judge checks' findings
    ("run_id", pa.string()),
    ("created_at", TS),
    ("board", pa.string()),
    ("judge", pa.string()),
    ("protocol", pa.string()),    # the judge stage: botchat_unieval, botchat_arena, botchat_gteval, mtbench101_judge
    ("check", pa.string()),       # unparsed, discrimination, probes (dialogbench/judge_checks/health.py)
    ("reason", pa.string()),      # the sentence the report shows
])

METRIC_SNAPSHOTS_TABLE = Table("metric_snapshots", METRIC_SNAPSHOTS, partition=("run_id",))
RUN_CONFIGS_TABLE = Table("run_configs", RUN_CONFIGS, partition=("run_id",))
METRIC_PAIRS_TABLE = Table("metric_pairs", METRIC_PAIRS, partition=("run_id",))
METRIC_UNITS_TABLE = Table("metric_units", METRIC_UNITS, partition=("run_id",))
METRIC_CHANGES_TABLE = Table("metric_changes", METRIC_CHANGES, partition=("run_id",))
JUDGE_FINDINGS_TABLE = Table("judge_findings", JUDGE_FINDINGS, partition=("run_id",))
HISTORY_TABLES = (METRIC_SNAPSHOTS_TABLE, RUN_CONFIGS_TABLE, METRIC_PAIRS_TABLE, METRIC_UNITS_TABLE,
                  METRIC_CHANGES_TABLE, JUDGE_FINDINGS_TABLE)
