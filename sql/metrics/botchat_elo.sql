-- botchat_elo: the latest ratings per judge and N: bootstrap Elo (init 1000, scale 400, K 32, 1000 shuffles,
-- median, mean over repeats) with its pooled 2.5–97.5% spread, and Bradley–Terry with bootstrap 95% intervals.
with ratings as (
    select * from {{ ref('elo') }}
),

latest as (
    select judge, n, arg_max(run_id, created_at) as run_id from ratings group by judge, n
),

final as (
    select ratings.model, ratings.n, ratings.judge, ratings.elo, ratings.elo_std, ratings.ci_low, ratings.ci_high,
           ratings.bt, ratings.bt_ci_low, ratings.bt_ci_high, ratings.games
    from ratings join latest using (judge, n, run_id)
)

select * from final
order by judge, n, elo desc
