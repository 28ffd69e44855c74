-- not_measured: the (judge, protocol) pairs whose numbers the board's latest run refused (its judge checks' findings,
-- judge_findings, of the latest run that recorded its metrics on the board: latest_metric_runs), with the reason the
-- report gives. The families' leaderboard views join it: their `measured` and `not_measured` columns, and `headline`
-- nulls the numbers. A lake whose runs predate judge_findings, or a board no run has finished on, has no row: every
-- number is measured.
with findings as (
    select * from {{ ref('judge_findings') }}
),

latest_run as (  -- the board's latest run that recorded metrics
    select run_id from {{ ref('latest_metric_runs') }}
    where board is not distinct from (select board from {{ ref('current_board') }})
),

final as (
    select judge, protocol, any_value("check") as "check", string_agg(reason, '; ') as reason
    from findings semi join latest_run using (run_id)
    group by judge, protocol
)

select * from final
