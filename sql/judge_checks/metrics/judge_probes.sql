-- judge_probes: how each judge does on its protocols' known-answer probes (dialogbench/judge_checks/probe_stage.py), one row
-- per (judge, protocol, kind) of the current board's probe cells (current_cells of the judge_probe:* stages): probes
-- (graded probes: a cell, or a pair of cells for pair-graded kinds), correct (the right answers), accuracy with its Wilson 95% interval
-- (ci_low / ci_high); unparsed (cells the judge's parser could not read: wrong, never left out); for UniEval's AI-marked
-- dialogues index_right and index_accuracy (the AI utterance flagged at its very index); for pair-graded kinds (a
-- golden answer against a useless one) mean_gap, the golden answer's rating minus the useless one's, over the pairs
-- with both rated. kind: human (a human dialogue: no AI), ai_marked (its twin with one AI line), human_vs_ai (the two
-- side by side, both orders: the human one should win), golden_vs_useless; with judge_checks.items: hard
-- right_vs_wrong (Arena: a held-out dialogue continued with its right response against a wrong one, both orders),
-- human_vs_marked (GTEval: a held-out human dialogue against its AI-marked twin, both orders) and golden_vs_wrong
-- (a golden answer against another turn's golden answer of the same task), paired as above.
with graded as (
    select * from {{ ref('judge_probe_items') }}
),

final as (
    select
        judge,
        protocol,
        kind,
        count(*) as probes,
        count(*) filter (where correct) as correct,
        count(*) filter (where correct) / count(*) as accuracy,
        wilson_low(count(*) filter (where correct), count(*)) as ci_low,
        wilson_high(count(*) filter (where correct), count(*)) as ci_high,
        count(*) filter (where unparsed) as unparsed,
        count(*) filter (where index_right) as index_right,
        count(*) filter (where index_right) / nullif(count(index_right), 0) as index_accuracy,
        avg(gap) as mean_gap
    from graded
    group by judge, protocol, kind
)

select * from final
order by judge, protocol, kind
