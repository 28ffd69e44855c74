-- botchat_pair_rates: BotChat Arena one-on-one results per judge, N and unordered model pair (model_a < model_b,
-- alphabetically), both orders of every comparison counted (BotChat paper: "we conduct bi-directional
-- comparisons and include both results"). games counts parsed verdicts only; unparsed ones are counted apart
-- and are never ties. win_rate_a, win_rate_b and tie_rate are fractions of games.
-- win_a_ci_* / win_b_ci_* / tie_ci_*: the Wilson score 95% interval of each of them (of games) (the wilson_low / wilson_high macros, sql/core/macros/wilson.sql), null when
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
        wilson_low(wins_a, games) as win_a_ci_low,
        wilson_high(wins_a, games) as win_a_ci_high,
        wilson_low(wins_b, games) as win_b_ci_low,
        wilson_high(wins_b, games) as win_b_ci_high,
        wilson_low(ties, games) as tie_ci_low,
        wilson_high(ties, games) as tie_ci_high
    from counted
)

select * from final
order by judge, n, model_a, model_b
