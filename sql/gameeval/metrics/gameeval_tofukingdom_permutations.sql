-- gameeval_tofukingdom_permutations: GameEval Table 4, one row per camp permutation (the model playing the prince,
-- spy and queen camps) of the current TofuKingdom games (gameeval_current): games = finished games (the paper's
-- successful trials), prince_wins / queen_wins / spy_wins = those each camp won (a model's points in that row are
-- its camp's wins); unfinished: played games that did not finish; missing: planned games not played yet;
-- chat_errors / placeholder_moves: over every played game, all camps (gameeval_tofukingdom has them per camp).
with games as (
    select
        assignment['prince'] as prince_model,
        assignment['spy'] as spy_model,
        assignment['queen'] as queen_model,
        played,
        finished,
        outcome,
        chat_errors,
        placeholder_moves
    from {{ ref('gameeval_current') }}
    where game = 'tofukingdom'
),

final as (
    select
        prince_model,
        spy_model,
        queen_model,
        count(*) filter (where played and finished) as games,
        count(*) filter (where played and finished and outcome = 'prince') as prince_wins,
        count(*) filter (where played and finished and outcome = 'queen') as queen_wins,
        count(*) filter (where played and finished and outcome = 'spy') as spy_wins,
        count(*) filter (where played and not finished) as unfinished,
        count(*) filter (where not played) as missing,
        coalesce(sum(chat_errors) filter (where played), 0) as chat_errors,
        coalesce(sum(placeholder_moves) filter (where played), 0) as placeholder_moves
    from games
    group by prince_model, spy_model, queen_model
)

select * from final
order by prince_model, spy_model, queen_model
