-- report_gameeval_example_games: the report's example GameEval game of each game: the first played game of the
-- current plans, finished ones first, then by item id (its transcript is read from gameeval_transcripts by key).
with current_games as (
    select * from {{ ref('gameeval_current') }} where played
),

final as (
    select game, cell_key, rounds, end_reason
    from current_games
    qualify row_number() over (partition by game order by finished desc, item_id, cell_key) = 1
)

select * from final
