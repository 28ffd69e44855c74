-- judge_reliability: how usable each judge's pairwise verdicts are, per judge and protocol (botchat_arena,
-- botchat_gteval), over the current plans: how many verdicts could not be parsed, and how often the two orders
-- of the same comparison (same seed, N or L, and sides) disagree once mapped back to the same side ("flips":
-- one order says A wins, the other says A loses or ties). Only comparisons with both orders parsed can flip.
with arena as (
    select * from {{ ref('botchat_arena') }}
),

gteval as (
    select * from {{ ref('botchat_gteval_comparisons') }}
),

comparisons as (  -- one row per judged order; `outcome` is for `side` (the alphabetically first model / the model)
    select
        judge,
        'botchat_arena' as protocol,
        n,
        item_id,
        least(model_a, model_b) as side,
        greatest(model_a, model_b) as other,
        model_a as shown_first,
        parsed,
        case
            when not parsed then null
            when winner = 'tie' then 'tie'
            when (winner = 'model_a') = (model_a < model_b) then 'win'
            else 'lose'
        end as outcome
    from arena
    union all
    select
        judge,
        'botchat_gteval' as protocol,
        n,
        item_id,
        model as side,
        opponent as other,
        shown_first,
        parsed,
        outcome
    from gteval
),

both_orders as (
    select
        judge,
        protocol,
        count(distinct shown_first) = 2 and bool_and(parsed) as both_parsed,
        count(distinct outcome) > 1 as flipped
    from comparisons
    group by judge, protocol, n, item_id, side, other
),

per_comparison as (
    select
        judge,
        protocol,
        count(*) as comparisons,
        count(*) filter (where not parsed) as unparsed
    from comparisons
    group by judge, protocol
),

per_pair as (
    select
        judge,
        protocol,
        count(*) filter (where both_parsed) as pairs_both_orders,
        count(*) filter (where both_parsed and flipped) as flips
    from both_orders
    group by judge, protocol
),

final as (
    select
        judge,
        protocol,
        comparisons,
        unparsed,
        round(unparsed / comparisons, 4) as unparsed_rate,
        pairs_both_orders,
        flips,
        round(flips / nullif(pairs_both_orders, 0), 4) as flip_rate
    from per_comparison join per_pair using (judge, protocol)
)

select * from final
order by judge, protocol
