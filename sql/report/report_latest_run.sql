-- report_latest_run: the report's run table, one row per stage of the most recent run (the run_id of the newest
-- started_at).
with runs as (
    select * from {{ ref('runs') }}
),

latest as (
    select arg_max(run_id, started_at) as run_id from runs
),

final as (
    select stage, planned, cached, computed, failed, blocked, seconds, started_at, run_id, detail
    from runs semi join latest using (run_id)
)

select * from final
