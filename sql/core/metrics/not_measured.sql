-- not_measured: the (judge, protocol) pairs whose numbers the board's latest run refused (its judge checks' findings,
-- judge_findings, of the latest run that recorded its metrics on the board), with the reason the report gives. The
-- families' leaderboard views join it: their `measured` and `not_measured` columns, and `headline` nulls the numbers.
-- A lake whose runs predate judge_findings, or a board no run has finished on, has no row: every number is measured.
with findings as (
    select * from {{ ref('judge_findings') }}
),

history as (
    select * from {{ ref('metric_history') }}
    where board is not distinct from (select board from {{ ref('current_board') }})
),

latest_run as (
    select arg_max(run_id, created_at) as run_id from history
),

final as (
    select judge, protocol, any_value("check") as "check", string_agg(reason, '; ') as reason
    from findings semi join latest_run using (run_id)
    group by judge, protocol
)

select * from final
