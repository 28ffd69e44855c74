-- canary_agreement: the judge canary per run, judge and judge stage: the judgments repeated, how many gave the same
-- answer as the first night (the verdict stored when the cell was first judged: the answer columns of its verdict
-- table, e.g. choice and ai_index for UniEval, the 1-10 score for MT-Bench-101), their share, the threshold the run
-- had (canary.min_agreement) and whether the share fell below it (flagged: the run ended Failed for it).
with canary as (
    select * from {{ ref('canary_judgments') }}
),

counted as (
    select
        run_id,
        judge,
        stage,
        min(created_at) as created_at,
        count(*) as judgments,
        count(*) filter (where agrees) as agree,
        count(*) filter (where not parsed) as unparsed,
        max(min_agreement) as min_agreement
    from canary
    group by run_id, judge, stage
),

final as (
    select
        *,
        round(agree / judgments, 4) as agreement,
        agree / judgments < min_agreement as flagged
    from counted
)

select * from final
order by created_at, judge, stage
