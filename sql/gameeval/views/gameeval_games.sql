-- gameeval_games: the latest row of every GameEval cell ever played (a game that ended in a backend error is
-- replayed by the next run under the same cell_key; only its newest row counts), any plan, any config. For ad-hoc
-- queries; the metrics read gameeval_current (the cells of each game's latest plan) instead. The latest row is
-- picked on the narrow key columns, then joined back, so the transcripts are never sorted.
with games as (
    select * from {{ source('gameeval_games') }}
),

latest as (
    select cell_key, created_at, run_id from games
    qualify row_number() over (partition by cell_key order by created_at desc, run_id desc) = 1
),

final as (
    select games.* from games semi join latest using (cell_key, created_at, run_id)
)

select * from final
