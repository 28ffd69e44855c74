-- judge_probe_orders: the pairwise known-answer probes (Arena, GTEval: the same two conversations shown in both
-- orders) per order and across the two orders, one row per (judge, protocol, kind, variant) of the current board's
-- probe cells. probes / correct / accuracy with its Wilson 95% interval (ci_low / ci_high) in that order (variant:
-- which side is shown first); items: the items judged in both orders (a probe id less its last segment, the order);
-- flips: those answered right in one order only (the verdict moved with the position, not the content), flip_rate
-- and its Wilson 95% interval (flip_ci_low / flip_ci_high, the same on both rows of a kind). The judge checks gate
-- each order's accuracy and the flip rate separately with `judge_checks.items: hard` (dialogbench/judge_checks/
-- health.py); single-cell probes of other protocols (UniEval, MT-Bench-101's pairs) have no order and no row here.
with probes as (
    select * from {{ ref('judge_probe_cells') }} where pair_id is null
),

ordered as (  -- the probes of kinds shown in two orders: an item's two cells share the probe id less the order
    select
        judge,
        protocol,
        kind,
        variant,
        regexp_replace(probe_id, '/[^/]*$', '') as item,
        coalesce(correct, false) as correct
    from probes
    qualify count(distinct variant) over (partition by judge, protocol, kind) = 2
),

orders as (
    select
        judge,
        protocol,
        kind,
        variant,
        count(*) as probes,
        count(*) filter (where correct) as correct,
        count(*) filter (where correct) / count(*) as accuracy,
        wilson_low(count(*) filter (where correct), count(*)) as ci_low,
        wilson_high(count(*) filter (where correct), count(*)) as ci_high
    from ordered
    group by judge, protocol, kind, variant
),

items as (  -- each item judged in both orders: right in one only is a flip
    select judge, protocol, kind, item, count(distinct variant) = 2 and count(*) filter (where correct) = 1 as flipped
    from ordered
    group by judge, protocol, kind, item
    having count(distinct variant) = 2
),

flips as (
    select
        judge,
        protocol,
        kind,
        count(*) as items,
        count(*) filter (where flipped) as flips,
        count(*) filter (where flipped) / count(*) as flip_rate,
        wilson_low(count(*) filter (where flipped), count(*)) as flip_ci_low,
        wilson_high(count(*) filter (where flipped), count(*)) as flip_ci_high
    from items
    group by judge, protocol, kind
),

final as (
    select orders.*, flips.items, flips.flips, flips.flip_rate, flips.flip_ci_low, flips.flip_ci_high
    from orders left join flips using (judge, protocol, kind)
)

select * from final
order by judge, protocol, kind, variant
