-- metric_units: the units each run's numbers were means of (dialogbench/stats): one row per (run, series, stratum,
-- cluster), what the night-over-night paired test (metric_changes, read by `changes`) resamples.
select * from {{ source('metric_units') }}
