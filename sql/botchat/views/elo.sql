-- elo: arena ratings computed by each run (Python: bootstrap Elo and Bradley–Terry), per judge, N and model, with the
-- `board` the run published to (run_boards for rows written before it was recorded).
with ratings as (
    select * from {{ source('elo') }}
),

run_boards as (
    select run_id, board from {{ ref('run_boards') }}
),

final as (
    select ratings.* replace (coalesce(ratings.board, run_boards.board) as board)
    from ratings left join run_boards using (run_id)
)

select * from final
