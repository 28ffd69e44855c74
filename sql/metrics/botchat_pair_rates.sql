-- botchat_pair_rates: BotChat Arena one-on-one results per judge, N and unordered model pair (model_a < model_b,
-- alphabetically), both orders of every comparison counted (BotChat paper: "we conduct bi-directional
-- comparisons and include both results"). games counts parsed verdicts only; unparsed ones are counted apart
-- and are never ties. win_rate_a, win_rate_b and tie_rate are fractions of games.
-- win_a_ci_* / win_b_ci_* / tie_ci_*: the Wilson score 95% interval of each of them (of games) (z = 1.96; sql/README.md, "Intervals"), null when
-- there is nothing to count.
with comparisons as (
    select * from {{ ref('botchat_arena') }}
),

oriented as (
    select
        judge,
        n,
        least(model_a, model_b) as pair_a,
        greatest(model_a, model_b) as pair_b,
        parsed,
        winner_model as winning_model,
        winner = 'tie' as is_tie
    from comparisons
),

counted as (
    select
        judge,
        n,
        pair_a as model_a,
        pair_b as model_b,
        count(*) filter (where parsed) as games,
        count(*) filter (where parsed and winning_model = pair_a) as wins_a,
        count(*) filter (where parsed and winning_model = pair_b) as wins_b,
        count(*) filter (where parsed and is_tie) as ties,
        count(*) filter (where not parsed) as unparsed
    from oriented
    group by judge, n, pair_a, pair_b
),

final as (
    select
        *,
        round(wins_a / nullif(games, 0), 4) as win_rate_a,
        round(wins_b / nullif(games, 0), 4) as win_rate_b,
        round(ties / nullif(games, 0), 4) as tie_rate,
        case when games > 0 then round(greatest(0.0, (wins_a + 1.920729410347062 - 1.959963984540054 * sqrt(wins_a * (games - wins_a) / games + 0.960364705173531)) / (games + 3.841458820694124)), 4) end as win_a_ci_low,
        case when games > 0 then round(least(1.0, (wins_a + 1.920729410347062 + 1.959963984540054 * sqrt(wins_a * (games - wins_a) / games + 0.960364705173531)) / (games + 3.841458820694124)), 4) end as win_a_ci_high,
        case when games > 0 then round(greatest(0.0, (wins_b + 1.920729410347062 - 1.959963984540054 * sqrt(wins_b * (games - wins_b) / games + 0.960364705173531)) / (games + 3.841458820694124)), 4) end as win_b_ci_low,
        case when games > 0 then round(least(1.0, (wins_b + 1.920729410347062 + 1.959963984540054 * sqrt(wins_b * (games - wins_b) / games + 0.960364705173531)) / (games + 3.841458820694124)), 4) end as win_b_ci_high,
        case when games > 0 then round(greatest(0.0, (ties + 1.920729410347062 - 1.959963984540054 * sqrt(ties * (games - ties) / games + 0.960364705173531)) / (games + 3.841458820694124)), 4) end as tie_ci_low,
        case when games > 0 then round(least(1.0, (ties + 1.920729410347062 + 1.959963984540054 * sqrt(ties * (games - ties) / games + 0.960364705173531)) / (games + 3.841458820694124)), 4) end as tie_ci_high
    from counted
)

select * from final
order by judge, n, model_a, model_b
