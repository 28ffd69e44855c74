-- default_board: the board the board-scoped views read when no board is named, one row (none on an empty lake): the
-- board of the latest run made without CLI overrides, else the latest run's (current_board adds the session's choice).
with runs as (
    select * from {{ ref('run_boards') }} where board is not null
),

final as (
    select coalesce(arg_max(board, started_at) filter (where not adhoc), arg_max(board, started_at)) as board
    from runs
    having count(*) > 0
)

select * from final
