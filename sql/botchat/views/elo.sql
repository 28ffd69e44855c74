-- elo: arena ratings computed by each run (Python: bootstrap Elo and Bradley–Terry), per judge, N and model, with the
-- `board` the run published to (source_with_board: run_boards for rows written before it was recorded).
with final as (
    select * from {{ source_with_board('elo') }}
)

select * from final
