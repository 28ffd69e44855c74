-- judge_probe_items: the current board's known-answer probes graded, one row per graded item (judge_probe_cells): a
-- single cell (UniEval's dialogues, each order of a pairwise item) or a pair of cells (pair_id set: a golden answer
-- and another one). correct: the expected answer (a pair: the 'higher' cell's rating strictly above the 'lower'
-- one's; an unreadable answer is wrong); index_right: UniEval's AI line flagged at its index; unparsed: a cell the
-- parser could not read; gap: a pair's rating difference (higher - lower); longer: which side is the longer one
-- ('expected' / 'other', null where not recorded); picked_longer: the judge chose the longer side (a single cell right
-- when the longer side is the expected one, wrong when it is the other and the answer names one conversation, not
-- both / neither; a pair: the longer reply rated strictly higher). What judge_probes and judge_verbosity count.
with probes as (
    select * from {{ ref('judge_probe_cells') }}
),

singles as (
    select
        judge,
        protocol,
        kind,
        probe_id as item,
        longer,
        coalesce(correct, false) as correct,
        index_right,
        not parsed as unparsed,
        cast(null as double) as gap,
        case
            when coalesce(correct, false) then longer = 'expected'
            else longer = 'other' and coalesce(answer in ('conversation_1', 'conversation_2'), false)
        end as picked_longer
    from probes
    where pair_id is null
),

pairs as (
    select
        judge,
        protocol,
        kind,
        pair_id,
        any_value(longer) as longer,
        max(score) filter (where expected = 'higher') as higher,
        max(score) filter (where expected = 'lower') as lower,
        count(*) filter (where not parsed) as unparsed
    from probes
    where pair_id is not null
    group by judge, protocol, kind, pair_id
),

final as (
    select * from singles
    union all
    select
        judge,
        protocol,
        kind,
        pair_id as item,
        longer,
        coalesce(higher > lower, false) as correct,
        cast(null as boolean) as index_right,
        unparsed > 0 as unparsed,
        higher - lower as gap,
        case when longer is not null then
            coalesce(case longer when 'expected' then higher > lower else lower > higher end, false)
        end as picked_longer
    from pairs
)

select * from final
