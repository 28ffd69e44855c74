-- judge_verbosity: does a judge prefer the longer side of its known-answer pairs (verbosity bias)? One row per (judge,
-- protocol, kind) of the current board's probe cells (current_cells of the judge_probe:* stages) that record which side
-- is the longer (judge_probes.longer: 'expected' when the side that should win or rate higher is the longer in
-- characters, 'other' when the other side is; BotChat's Arena / GTEval pairs, MT-Bench-101's golden-vs-other pairs;
-- length-controlled with judge_checks.items: hard, where each side is the longer in half of the items). An item is a
-- single cell of a pairwise kind (each order of an Arena / GTEval item counts as one, as judge_probes counts them) or a
-- pair of cells of a pair-graded kind (pair_id set: right when the 'higher' cell's rating is above the 'lower' one's,
-- as judge_probes grades it). n_longer / right_longer / acc_longer: the items where the right side is the longer one,
-- those the judge got right, their share; n_shorter / right_shorter / acc_shorter: the same where the right side is the
-- shorter one; gap: acc_longer - acc_shorter (null unless both are counted), with its 95% interval (gap_ci_low /
-- gap_ci_high) by Newcombe's hybrid score method from the two Wilson intervals (the wilson_low / wilson_high macros,
-- sql/core/macros/wilson.sql): gap - sqrt((acc_longer - low_longer)² + (high_shorter - acc_shorter)²) and
-- gap + sqrt((high_longer - acc_longer)² + (acc_shorter - low_shorter)²); longer_pick_rate: the share of the items
-- where the judge picked the longer side (a single cell: the conversation it did not name as AI-involved is the longer
-- one; a pair: the longer reply rated strictly higher), ties and unreadable answers picking neither. An unreadable
-- answer is wrong, as in judge_probes. The judge checks fail a kind whose gap_ci_low is over
-- judge_checks.max_verbosity_gap (dialogbench/judge_checks/health.py).
with items as (
    select * from {{ ref('judge_probe_items') }} where longer is not null
),

counted as (
    select
        judge,
        protocol,
        kind,
        count(*) as items,
        count(*) filter (where longer = 'expected') as n_longer,
        count(*) filter (where longer = 'expected' and correct) as right_longer,
        count(*) filter (where longer = 'other') as n_shorter,
        count(*) filter (where longer = 'other' and correct) as right_shorter,
        count(*) filter (where picked_longer) / count(*) as longer_pick_rate
    from items
    group by judge, protocol, kind
),

intervals as (
    select
        *,
        right_longer / nullif(n_longer, 0) as acc_longer,
        right_shorter / nullif(n_shorter, 0) as acc_shorter,
        wilson_low(right_longer, n_longer) as low_longer,
        wilson_high(right_longer, n_longer) as high_longer,
        wilson_low(right_shorter, n_shorter) as low_shorter,
        wilson_high(right_shorter, n_shorter) as high_shorter
    from counted
),

final as (
    select
        judge,
        protocol,
        kind,
        items,
        n_longer,
        right_longer,
        acc_longer,
        n_shorter,
        right_shorter,
        acc_shorter,
        acc_longer - acc_shorter as gap,
        acc_longer - acc_shorter
            - sqrt((acc_longer - low_longer) ** 2 + (high_shorter - acc_shorter) ** 2) as gap_ci_low,
        acc_longer - acc_shorter
            + sqrt((high_longer - acc_longer) ** 2 + (acc_shorter - low_shorter) ** 2) as gap_ci_high,
        longer_pick_rate
    from intervals
)

select * from final
order by judge, protocol, kind
