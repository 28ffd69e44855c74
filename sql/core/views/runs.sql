-- runs: one row per (run, stage): planned / cached / computed / failed / blocked cells, seconds, the config path,
-- the stage's detail, and the `board` the run published to (run_boards for rows written before it was recorded).
with runs as (
    select * from {{ source('runs') }}
),

run_boards as (
    select run_id, board from {{ ref('run_boards') }}
),

final as (
    select runs.* replace (coalesce(runs.board, run_boards.board) as board)
    from runs left join run_boards using (run_id)
)

select * from final
