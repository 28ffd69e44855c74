-- mtbench101_leaderboard: Table 3 of MT-Bench-101, one row per (model, judge): a column per task (Table 3's
-- order) and `avg`, the UNWEIGHTED mean of the 13 task scores (the rule that reproduces every row of Table 3,
-- see dialogbench/mtbench101/scoring.py), null unless all 13 tasks have a score (the history snapshots read it so).
-- `tasks_scored` says how many do; `avg_scored` is the same mean over those tasks only (equal to `avg` once all 13
-- have a score), for a run that covers part of the tasks: the report shows it, marked partial, where `avg` is null.
-- opencompass_avg: the same mean over mtbench101_tasks.opencompass_score (OpenCompass's parse, and a dialogue
-- with an unreadable turn scored by the minimum over its other turns), null unless all 13 tasks have one;
-- opencompass_avg_scored / opencompass_tasks_scored: its mean over the tasks that have one (what OpenCompass's
-- summarizer reports when tasks are missing), and how many.
with tasks as (
    select * from {{ ref('mtbench101_tasks') }}
),

final as (
    select
        model,
        judge,
        max(score) filter (where task = 'CM') as "CM",
        max(score) filter (where task = 'SI') as "SI",
        max(score) filter (where task = 'AR') as "AR",
        max(score) filter (where task = 'TS') as "TS",
        max(score) filter (where task = 'CC') as "CC",
        max(score) filter (where task = 'CR') as "CR",
        max(score) filter (where task = 'FR') as "FR",
        max(score) filter (where task = 'SC') as "SC",
        max(score) filter (where task = 'SA') as "SA",
        max(score) filter (where task = 'MR') as "MR",
        max(score) filter (where task = 'GR') as "GR",
        max(score) filter (where task = 'IC') as "IC",
        max(score) filter (where task = 'PI') as "PI",
        case when count(score) = 13 then avg(score) end as "avg",
        count(score) as tasks_scored,
        avg(score) as avg_scored,
        sum(unparsed)::bigint as unparsed,
        sum(missing)::bigint as missing,
        case when count(opencompass_score) = 13 then avg(opencompass_score) end as opencompass_avg,
        count(opencompass_score) as opencompass_tasks_scored,
        avg(opencompass_score) as opencompass_avg_scored
    from tasks
    group by model, judge
)

select * from final
order by "avg" desc nulls last, model, judge
