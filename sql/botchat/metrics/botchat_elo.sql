-- botchat_elo: the latest ratings per judge and N on the current board (the ratings the board's latest run of each
-- (judge, N) computed): bootstrap Elo (init 1000, scale 400, K 32, 1000 shuffles, median, mean over repeats) with the
-- pooled 2.5–97.5 percentile spread of its bootstrap rounds (ci_low / ci_high: a spread over shuffles of the game
-- order, not a confidence interval), and Bradley–Terry with its bootstrap 95% confidence interval.
-- measured / not_measured: false and the reason when the board's latest run refused this judge's numbers on botchat_arena
-- (not_measured: its judge checks' findings), as the report does; the numbers stay here as computed (`headline`
-- nulls them).
with ratings as (
    select * from {{ ref('elo') }}
    where board is not distinct from (select board from {{ ref('current_board') }})
),

latest as (
    select judge, n, arg_max(run_id, created_at) as run_id from ratings group by judge, n
),

refused as (
    select * from {{ ref('not_measured') }} where protocol = 'botchat_arena'
),

final as (
    select ratings.model, ratings.n, ratings.judge, ratings.elo, ratings.elo_std, ratings.ci_low, ratings.ci_high,
           ratings.bt, ratings.bt_ci_low, ratings.bt_ci_high, ratings.games, refused.reason is null as measured,
           refused.reason as not_measured
    from ratings join latest using (judge, n, run_id) left join refused using (judge)
)

select * from final
order by judge, n, elo desc
