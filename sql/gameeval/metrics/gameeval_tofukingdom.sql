-- gameeval_tofukingdom: GameEval TofuKingdom points (§3.3, Table 4's totals), one row per (model, camp) of the current
-- games (gameeval_current): one model plays every role of a camp (prince: Prince, Princess, Chef; queen: Queen,
-- Minister, Guard; spy: Spy, Maid). Only successful trials count, as in the paper: for each finished game the model
-- of each camp has games += 1 and points += 1 when its camp won. unfinished / missing: the camp's games that did not
-- finish, or are planned but not played yet (no points, not in `games`).
with games as (
    select assignment, played, finished, outcome
    from {{ ref('gameeval_current') }}
    where game = 'tofukingdom'
),

camps as (
    select camp, assignment[camp] as model, played, finished, outcome
    from games cross join (values ('prince'), ('queen'), ('spy')) as c(camp)
),

final as (
    select
        model,
        camp,
        count(*) filter (where played and finished) as games,
        count(*) filter (where played and finished and outcome = camp) as points,
        count(*) filter (where played and not finished) as unfinished,
        count(*) filter (where not played) as missing
    from camps
    group by model, camp
)

select * from final
order by model, camp
