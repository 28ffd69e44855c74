-- botchat_pair_rates: BotChat Arena one-on-one results per judge, N and unordered model pair (model_a < model_b,
-- alphabetically), both orders of every comparison counted (BotChat paper: "we conduct bi-directional
-- comparisons and include both results"). games counts parsed verdicts only; unparsed ones are counted apart
-- and are never ties. win_rate_a, win_rate_b and tie_rate are fractions of games.
-- win_a_ci_* / win_b_ci_* / tie_ci_*: the Wilson score 95% interval of each of them (of games), the two orders of a
-- seed as one cluster (the clustered_wilson_* macros, sql/core/macros/wilson.sql: Wilson's formula on the effective
-- number of games), null when there is nothing to count.
with comparisons as (
    select * from {{ ref('botchat_arena') }}
),

oriented as (
    select
        judge,
        n,
        item_id,
        least(model_a, model_b) as pair_a,
        greatest(model_a, model_b) as pair_b,
        parsed,
        winner_model as winning_model,
        winner = 'tie' as is_tie
    from comparisons
),

seeds as (  -- both orders of one seed are one cluster (parsed verdicts: the rates' denominator)
    select
        judge,
        n,
        pair_a,
        pair_b,
        item_id,
        count(*) filter (where parsed) as m,
        count(*) filter (where parsed and winning_model = pair_a) as ya,
        count(*) filter (where parsed and winning_model = pair_b) as yb,
        count(*) filter (where parsed and is_tie) as yt
    from oriented
    group by judge, n, pair_a, pair_b, item_id
),

clusters as (
    select
        judge,
        n,
        pair_a as model_a,
        pair_b as model_b,
        count(*) filter (where m > 0) as seeds,
        sum(m * m) as smm,
        sum(ya * ya) as saa,
        sum(ya * m) as sam,
        sum(yb * yb) as sbb,
        sum(yb * m) as sbm,
        sum(yt * yt) as stt,
        sum(yt * m) as stm
    from seeds
    group by judge, n, pair_a, pair_b
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
        counted.*,
        round(wins_a / nullif(games, 0), 4) as win_rate_a,
        round(wins_b / nullif(games, 0), 4) as win_rate_b,
        round(ties / nullif(games, 0), 4) as tie_rate,
        clustered_wilson_low(wins_a, games, saa, sam, smm, seeds) as win_a_ci_low,
        clustered_wilson_high(wins_a, games, saa, sam, smm, seeds) as win_a_ci_high,
        clustered_wilson_low(wins_b, games, sbb, sbm, smm, seeds) as win_b_ci_low,
        clustered_wilson_high(wins_b, games, sbb, sbm, smm, seeds) as win_b_ci_high,
        clustered_wilson_low(ties, games, stt, stm, smm, seeds) as tie_ci_low,
        clustered_wilson_high(ties, games, stt, stm, smm, seeds) as tie_ci_high
    from counted join clusters using (judge, n, model_a, model_b)
)

select * from final
order by judge, n, model_a, model_b
