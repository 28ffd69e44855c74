-- mtbench101_tasks: MT-Bench-101 task scores per model and judge (§3.4, Table 3). A dialogue's score is the
-- MINIMUM rating over its judged turns; the task score is the mean over the dialogues that have one. A dialogue
-- with a turn not judged yet (its answer or its judgment failed, or is still to come) has no score and is counted in
-- `missing`; one whose turns are all judged but one or more unparsed has no score either and is counted in
-- `unparsed` (a minimum over a subset could only be too high). A model that never answered is missing, never
-- unparsed.
-- opencompass_score: the same task score as OpenCompass computes it (summarizers/subjective/mtbench101.py,
-- get_final_results; summarizers/subjective/utils.py, get_judgeanswer_and_reference drops the replies its
-- parser cannot read): each turn's opencompass_score (first [n], no range check, see mtbench101_turns), a
-- dialogue scores the minimum over the turns that parser reads, so a dialogue with an unreadable turn keeps a
-- score from the others. A dialogue counts once all its turns are judged and at least one was read
-- (opencompass_dialogues).
-- measured / not_measured: false and the reason when the board's latest run refused this judge's numbers on mtbench101_judge
-- (not_measured: its judge checks' findings), as the report does; the numbers stay here as computed (`headline`
-- nulls them).
-- score_ci_low / score_ci_high: the score's 95% interval, a cluster bootstrap over its dialogues, as the board's latest
-- run recorded it (headline; dialogbench/stats), null when that run recorded another value (a later run not snapshot
-- yet), none (fewer than 5 dialogues, every dialogue the same) or no run recorded one.
with dialogues as (
    select * from {{ ref('mtbench101_dialogues') }}
),

taxonomy as (
    select * from {{ ref('mtbench101_taxonomy') }}
),

scores as (
    select
        model,
        judge,
        task,
        avg(score) filter (where complete) as score,
        count(*) filter (where complete) as dialogues,
        count(*) filter (where judged and not complete) as unparsed,
        count(*) filter (where not judged) as missing,
        avg(opencompass_score) filter (where judged) as opencompass_score,
        count(opencompass_score) filter (where judged) as opencompass_dialogues
    from dialogues
    group by model, judge, task
),

recorded as (  -- each task score: the 95% interval the board's latest run recorded (headline), of the value it recorded
    select model, slice, raw_value, raw_ci_low, raw_ci_high from {{ ref('headline') }}
    where leaderboard = 'mtbench101_tasks' and metric = 'score'
),

refused as (
    select * from {{ ref('not_measured') }} where protocol = 'mtbench101_judge'
),

final as (  -- the taxonomy's tasks, in Table 3's order
    select
        scores.*,
        recorded.raw_ci_low as score_ci_low,
        recorded.raw_ci_high as score_ci_high,
        refused.reason is null as measured,
        refused.reason as not_measured,
        taxonomy.position
    from scores join taxonomy using (task) left join refused using (judge)
    left join recorded
        on recorded.model = scores.model and recorded.slice = 'judge=' || scores.judge || ', task=' || scores.task
        and abs(recorded.raw_value - scores.score) <= 1e-6
)

select * exclude (position) from final
order by model, judge, position
