-- report_latest_run: the report's run table, one row per stage of the current board's latest run (latest_runs: the
-- newest started_at among the board's runs, ties broken by run_id); none while that run has finished no stage.
with runs as (
    select * from {{ ref('runs') }}
),

latest as (
    select run_id from {{ ref('latest_runs') }}
    where board is not distinct from (select board from {{ ref('current_board') }})
),

final as (
    select stage, planned, cached, computed, failed, blocked, seconds, started_at, run_id, detail
    from runs semi join latest using (run_id)
)

select * from final
