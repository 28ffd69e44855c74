-- mtbench101_leaderboard: Table 3 of MT-Bench-101, one row per (model, judge): a column per task (Table 3's
-- order) and `avg`, the UNWEIGHTED mean of the 13 task scores (the rule that reproduces every row of Table 3,
-- see dialogbench/mtbench101/scoring.py), null unless all 13 tasks have a score (the history snapshots read it so).
-- `tasks_scored` says how many do; `avg_scored` is the same mean over those tasks only (equal to `avg` once all 13
-- have a score), for a run that covers part of the tasks: the report shows it, marked partial, where `avg` is null.
-- opencompass_avg: the same mean over mtbench101_tasks.opencompass_score (OpenCompass's parse, and a dialogue
-- with an unreadable turn scored by the minimum over its other turns), null unless all 13 tasks have one;
-- opencompass_avg_scored / opencompass_tasks_scored: its mean over the tasks that have one (what OpenCompass's
-- summarizer reports when tasks are missing), and how many.
-- avg_ci_low / avg_ci_high: the average's 95% interval (dialogues resampled within each task) as the board's latest
-- run recorded it (headline), null when it recorded another value or none.
-- measured / not_measured: as mtbench101_tasks (the board's latest run refused this judge's numbers: not_measured).
with tasks as (
    select * from {{ ref('mtbench101_tasks') }}
),

recorded as (  -- the average: the 95% interval the board's latest run recorded (headline), of the value it recorded
    select model, slice, raw_value, raw_ci_low, raw_ci_high from {{ ref('headline') }}
    where leaderboard = 'mtbench101_leaderboard' and metric = 'avg'
),

task_scores as (  -- a column per task, in Table 3's order
    pivot tasks
    on task in ('CM', 'SI', 'AR', 'TS', 'CC', 'CR', 'FR', 'SC', 'SA', 'MR', 'GR', 'IC', 'PI')
    using max(score)
    group by model, judge
),

means as (
    select
        model,
        judge,
        case when count(score) = 13 then avg(score) end as "avg",
        count(score) as tasks_scored,
        avg(score) as avg_scored,
        sum(unparsed)::bigint as unparsed,
        sum(missing)::bigint as missing,
        case when count(opencompass_score) = 13 then avg(opencompass_score) end as opencompass_avg,
        count(opencompass_score) as opencompass_tasks_scored,
        avg(opencompass_score) as opencompass_avg_scored,
        bool_and(measured) as measured,
        any_value(not_measured) as not_measured
    from tasks
    group by model, judge
),

final as (
    select
        task_scores.*,
        means.* exclude (model, judge),
        recorded.raw_ci_low as avg_ci_low,
        recorded.raw_ci_high as avg_ci_high
    from task_scores join means using (model, judge)
    left join recorded
        on recorded.model = task_scores.model and recorded.slice = 'judge=' || task_scores.judge
        and abs(recorded.raw_value - means."avg") <= 1e-6
)

select * from final
order by "avg" desc nulls last, model, judge
