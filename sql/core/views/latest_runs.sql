-- latest_runs: each board's latest run, one row per board of run_boards: board, run_id, started_at. The run of least
-- recency in board_runs' order (the newest started_at, ties broken by run_id) among those that recorded themselves
-- (run_boards: a config, a stage or a plan; in a lake a run writes, every run). The report's run table, header and
-- cost table read the current board's row, boards its latest_run_id; null board: the runs whose board is unknown
-- (current_board on a lake with no run recorded).
with board_runs as (
    select * from {{ ref('board_runs') }}
),

final as (
    select board, run_id, started_at
    from board_runs
    where recorded
    qualify row_number() over (partition by board order by recency) = 1
)

select * from final
