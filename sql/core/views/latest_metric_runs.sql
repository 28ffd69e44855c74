-- latest_metric_runs: each board's latest run that recorded metrics, one row per board of metric_history: board,
-- run_id, started_at. The runs in board_runs' order (newest started_at first, ties by run_id, as latest_runs), so it is
-- latest_runs' run unless that one recorded no metrics (it failed before its snapshot, or is still running): then the
-- newest one before it that did. headline, not_measured and changes read the current board's row, so a run that
-- recorded nothing leaves the board's numbers and what changed as its previous run left them.
with board_runs as (
    select * from {{ ref('board_runs') }}
),

metric_runs as (  -- the runs that recorded metrics on each board
    select distinct board, run_id from {{ ref('metric_history') }}
),

final as (
    select metric_runs.board, metric_runs.run_id, board_runs.started_at
    from metric_runs join board_runs using (run_id)
    qualify row_number() over (
        partition by metric_runs.board order by board_runs.recency, metric_runs.run_id desc
    ) = 1
)

select * from final
