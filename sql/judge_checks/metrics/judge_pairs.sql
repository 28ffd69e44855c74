-- judge_pairs: every item two different judges answered on the board's current cells, one row per (protocol,
-- item, judge_a, judge_b) with judge_a < judge_b and both answers: what judge agreement is computed from
-- (dialogbench/judge_checks/agreement.py: Cohen's kappa per protocol and pair of judges, Spearman's rho of their model
-- rankings, the disagreements the explorer lists). The item and its columns are judge_agreement_items': the identity
-- leaves the judge out (the seed, the judged model(s), the order shown, the length judged), and both judges judged
-- the same output (output_key: the dialogue / answer keys), so a board whose config changed judge pairs the old
-- judge's current cells with the new one's. category_a / category_b: the answer compared (Yes / No; win / lose / tie
-- of `side`; the rating), null when unparsed; agree: both parsed and the categories equal (null unless both parsed).
-- Human labels (imported with `dialogbench labels import`) pair with these items in Python (labels.human_pairs), as
-- judge 'human:<source>', in these same columns.
with items as (
    select * from {{ ref('judge_agreement_items') }}
),

final as (
    select
        a.protocol,
        a.item,
        a.judge as judge_a,
        b.judge as judge_b,
        a.cluster,
        a.item_id,
        a.side,
        a.other,
        a.shown_first,
        a.n,
        a.output_key,
        a.parsed as parsed_a,
        b.parsed as parsed_b,
        a.answer as answer_a,
        b.answer as answer_b,
        a.category as category_a,
        b.category as category_b,
        a.score as score_a,
        b.score as score_b,
        case when a.category is not null and b.category is not null then a.category = b.category end as agree,
        a.cell_key as cell_key_a,
        b.cell_key as cell_key_b
    from items as a
    join items as b
        on a.protocol = b.protocol
        and a.item = b.item
        and a.output_key is not distinct from b.output_key
        and a.judge < b.judge
)

select * from final
order by protocol, judge_a, judge_b, item
