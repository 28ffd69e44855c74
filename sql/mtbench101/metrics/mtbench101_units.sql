-- mtbench101_units: the units MT-Bench-101's headline numbers rest on, for their bootstrap intervals and paired
-- comparisons (dialogbench/stats): one row per scored dialogue, the dialogue being the independent unit (its turns
-- share its context and a judge's view of it; its score is the minimum over them, as mtbench101_tasks counts it).
--   mtbench101_tasks.score (keys judge, task): the dialogues of the task, one stratum;
--   mtbench101_leaderboard.avg (keys judge): every scored dialogue, stratified by task (avg is the unweighted mean of
--   the 13 task means, so each resample draws each task's dialogues from that task).
-- Columns, as every family's *_units view: leaderboard, metric, model, key_values (the metric's keys, as text, in its
-- Metric's order), stratum, cluster, value, weight (a number is the mean over strata of sum(value*weight)/sum(weight)).
with dialogues as (
    select * from {{ ref('mtbench101_dialogues') }}
),

scored as (
    select * from dialogues where complete and score is not null
),

final as (
    select
        'mtbench101_tasks' as leaderboard,
        'score' as metric,
        model,
        [judge, task]::varchar[] as key_values,
        '' as stratum,
        dialogue_id::varchar as cluster,
        score::double as value,
        1.0::double as weight
    from scored
    union all
    select
        'mtbench101_leaderboard' as leaderboard,
        'avg' as metric,
        model,
        [judge]::varchar[] as key_values,
        task as stratum,
        dialogue_id::varchar as cluster,
        score::double as value,
        1.0::double as weight
    from scored
)

select * from final
