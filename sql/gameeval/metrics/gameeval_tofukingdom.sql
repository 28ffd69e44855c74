-- gameeval_tofukingdom: GameEval TofuKingdom points (§3.3, Table 4's totals), one row per (model, camp) of the current
-- games (gameeval_current): one model plays every role of a camp (prince: Prince, Princess, Chef; queen: Queen,
-- Minister, Guard; spy: Spy, Maid). Only successful trials count, as in the paper: for each finished game the model
-- of each camp has games += 1 and points += 1 when its camp won. unfinished / missing: the camp's games that did not
-- finish, or are planned but not played yet (no points, not in `games`). chat_errors / placeholder_moves: the moves of
-- the camp's roles in every played game (finished or not) that the host marked invalid / that repeat the prompt's
-- placeholder text (flagged, never a chat error), from gameeval_moves (side = camp).
-- win_rate_ci_low / win_rate_ci_high: the 95% interval of points / games, a bootstrap over the games, as the board's
-- latest run recorded it (headline): null when it recorded another value or none.
with games as (
    select assignment, played, finished, outcome
    from {{ ref('gameeval_current') }}
    where game = 'tofukingdom'
),

moves as (
    select model, side as camp, chat_errors, placeholder_moves
    from {{ ref('gameeval_moves') }}
    where game = 'tofukingdom'
),

camps as (
    select camp, assignment[camp] as model, played, finished, outcome
    from games cross join (values ('prince'), ('queen'), ('spy')) as c(camp)
),

recorded as (  -- the camp's win rate: the 95% intervals the board's latest run recorded (headline), of the values it recorded
    select metric, model, slice, raw_value, raw_ci_low, raw_ci_high from {{ ref('headline') }}
    where leaderboard = 'gameeval_tofukingdom'
),

counted as (
    select
        model,
        camp,
        count(*) filter (where played and finished) as games,
        count(*) filter (where played and finished and outcome = camp) as points,
        count(*) filter (where played and not finished) as unfinished,
        count(*) filter (where not played) as missing
    from camps
    group by model, camp
),

final as (
    select
        counted.*,
        coalesce(moves.chat_errors, 0) as chat_errors,
        coalesce(moves.placeholder_moves, 0) as placeholder_moves,
        recorded.raw_ci_low as win_rate_ci_low,
        recorded.raw_ci_high as win_rate_ci_high
    from counted
    left join moves on moves.model = counted.model and moves.camp = counted.camp
    left join recorded
        on recorded.metric = 'win_rate' and recorded.model = counted.model and recorded.slice = 'camp=' || counted.camp
        and abs(recorded.raw_value - counted.points / nullif(counted.games, 0)) <= 1e-6
)

select * from final
order by model, camp
