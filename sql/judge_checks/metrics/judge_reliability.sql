-- judge_reliability: how usable each judge's pairwise verdicts are, per judge and protocol (botchat_arena,
-- botchat_gteval), over the current plans: how many verdicts could not be parsed, and how often the two orders
-- of the same comparison (same seed, N or L, and sides) disagree once mapped back to the same side ("flips":
-- one order says A wins, the other says A loses or ties). Only comparisons with both orders parsed can flip.
-- MT-Bench-101 (protocol mtbench101_judge) has a row too: its judged ratings (`comparisons`) and unparsed ones, no
-- flips (one order only), and opencompass_differs: how many of those ratings OpenCompass's parser (the first
-- [n], no range check) reads differently from the project's (the last [[n]] in 1..10), see mtbench101_turns.
-- opencompass_differs is null for the pairwise protocols.
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

ratings as (
    select * from {{ ref('mtbench101_turns') }} where judged
),

pairwise as (
    select
        judge,
        protocol,
        comparisons,
        unparsed,
        round(unparsed / comparisons, 4) as unparsed_rate,
        pairs_both_orders,
        flips,
        round(flips / nullif(pairs_both_orders, 0), 4) as flip_rate,
        null::bigint as opencompass_differs
    from per_comparison join per_pair using (judge, protocol)
),

mtbench101 as (
    select
        judge,
        'mtbench101_judge' as protocol,
        count(*) as comparisons,
        count(*) filter (where not parsed) as unparsed,
        round(count(*) filter (where not parsed) / count(*), 4) as unparsed_rate,
        null::bigint as pairs_both_orders,
        null::bigint as flips,
        null::double as flip_rate,
        count(*) filter (where opencompass_differs) as opencompass_differs
    from ratings
    group by judge
),

final as (
    select * from pairwise
    union all by name
    select * from mtbench101
)

select * from final
order by judge, protocol
