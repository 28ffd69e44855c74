-- report_arena_ratings: the report's Arena ratings: botchat_elo's latest ratings per (judge, N, model) with what
-- makes them degenerate: all_ties (every parsed verdict of the (judge, N) in botchat_pair_rates is a tie, so every
-- rating is the initial one and ranks nothing), decisive (parsed verdicts with a winner, all pairs), and
-- elo_zero_width / bt_zero_width (an interval whose bounds are equal: no spread measured, not certainty).
with ratings as (
    select * from {{ ref('botchat_elo') }}
),

pair_rates as (
    select * from {{ ref('botchat_pair_rates') }}
),

verdicts as (
    select judge, n, sum(games)::bigint as verdicts, sum(wins_a + wins_b)::bigint as decisive, sum(ties)::bigint as ties
    from pair_rates
    group by judge, n
),

final as (
    select
        ratings.*,
        verdicts.verdicts,
        verdicts.decisive,
        coalesce(verdicts.verdicts > 0 and verdicts.decisive = 0, false) as all_ties,
        coalesce(ratings.ci_low = ratings.ci_high, false) as elo_zero_width,
        coalesce(ratings.bt_ci_low = ratings.bt_ci_high, false) as bt_zero_width
    from ratings left join verdicts using (judge, n)
)

select * from final
