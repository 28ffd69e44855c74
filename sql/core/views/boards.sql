-- boards: every board of the lake (dialogbench/run/boards.py), one row each: its runs, its first and latest run
-- (latest_runs: the newest started_at, ties broken by run_id), whether it is ad hoc (named from CLI overrides) and
-- whether it is the readers' default (current_board when no board is named).
with runs as (
    select * from {{ ref('run_boards') }} where board is not null
),

latest_runs as (
    select * from {{ ref('latest_runs') }}
),

per_board as (
    select
        board,
        any_value(adhoc) as adhoc,
        count(*) as runs,
        min(started_at) as first_started_at
    from runs
    group by board
),

final as (
    select
        per_board.*,
        latest_runs.started_at as latest_started_at,
        latest_runs.run_id as latest_run_id,
        per_board.board = (select board from {{ ref('default_board') }}) as is_default
    from per_board
    left join latest_runs using (board)
)

select * from final
order by latest_started_at desc nulls last, board
