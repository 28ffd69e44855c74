-- board_runs: the one order of each board's runs, one row per run: its board, when it started and its recency within
-- the board (1 for the board's newest run, 2 for the one before, ...): newest started_at first, ties broken by run_id
-- (the greater first), so every view that asks "which run is latest" or "which came before" gets the same answer.
-- The runs are those of run_boards (board and start: the earliest of what the run recorded as it ran; recorded: true),
-- plus a run that recorded metrics and nothing run_boards reads (recorded: false; metric_history of a lake written by
-- hand), started at its first snapshot, on its snapshots' board. latest_runs is each board's recorded run of least
-- recency; latest_metric_runs its run with metrics of least recency; changes compares each series with its value of
-- the next older run.
with run_boards as (
    select * from {{ ref('run_boards') }}
),

metric_runs as (  -- runs that recorded metrics: their board and first snapshot
    select run_id, any_value(board) as board, min(created_at) as started_at
    from {{ ref('metric_history') }}
    group by run_id
),

runs as (
    select
        run_id,
        coalesce(r.board, m.board) as board,
        coalesce(r.started_at, m.started_at) as started_at,
        r.run_id is not null as recorded
    from run_boards r
    full outer join metric_runs m using (run_id)
),

final as (
    select
        run_id,
        board,
        started_at,
        row_number() over (partition by board order by started_at desc nulls last, run_id desc) as recency,
        recorded
    from runs
)

select * from final
