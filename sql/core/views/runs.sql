-- runs: one row per (run, stage): planned / cached / computed / failed / blocked cells, seconds, the config path,
-- the stage's detail, and the `board` the run published to (source_with_board: run_boards for rows written before it
-- was recorded).
with final as (
    select * from {{ source_with_board('runs') }}
)

select * from final
