-- run_boards: the board each run published to (dialogbench/run/boards.py), one row per run, with when it started. A run
-- records its board in run_configs (written as it starts), runs and plans (a stage run through the Python API without
-- the flow writes plans only); a run from before boards existed published to its config file's stem (runs.config /
-- run_configs.config_path: configs/nightly.yaml -> nightly), the board that config publishes to now, so its history
-- and plans stay with the same config's later runs. adhoc: a board named from CLI overrides ('demo+limit=4': it holds
-- a '+'), never a reader's default board.
with configs as (
    select run_id, board, config_path, created_at from {{ source('run_configs') }}
),

stages as (
    select run_id, any_value(board) as board, any_value(config) as config_path, min(started_at) as started_at
    from {{ source('runs') }}
    group by run_id
),

planned as (
    select run_id, any_value(board) as board, min(created_at) as started_at
    from {{ source('plans') }}
    group by run_id
),

joined as (
    select
        run_id,
        coalesce(c.board, s.board, p.board) as recorded,
        coalesce(c.config_path, s.config_path) as config_path,
        least(c.created_at, s.started_at, p.started_at) as started_at
    from configs c
    full outer join stages s using (run_id)
    full outer join planned p using (run_id)
),

final as (
    select
        run_id,
        coalesce(recorded, nullif(regexp_extract(config_path, '([^/\\]+?)(\.[A-Za-z0-9]+)?$', 1), '')) as board,
        started_at
    from joined
)

select *, board like '%+%' as adhoc from final
