-- metric_history: every metric value every run recorded (metric_snapshots: one row per metric of each leaderboard
-- row, written once a run's stages are done), with the fingerprints a change is traced to (model_fp, judge_fp,
-- prompt_fp, section_fp, config_fp). One series is (family, board, metric, model, slice); its rows over run_id /
-- created_at are its history. The effective config of a run is in run_configs.
select * from {{ source('metric_snapshots') }}
