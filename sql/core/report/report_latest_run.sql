-- report_latest_run: the report's run table, one row per stage of the current board's most recent run (the run_id of
-- the newest started_at among the board's runs).
with runs as (
    select * from {{ ref('runs') }}
    where board is not distinct from (select board from {{ ref('current_board') }})
),

latest as (
    select arg_max(run_id, started_at) as run_id from runs
),

final as (
    select stage, planned, cached, computed, failed, blocked, seconds, started_at, run_id, detail
    from runs semi join latest using (run_id)
)

select * from final
