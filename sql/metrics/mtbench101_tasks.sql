-- mtbench101_tasks: MT-Bench-101 task scores per model and judge (§3.4, Table 3). A dialogue's score is the
-- MINIMUM rating over its judged turns; the task score is the mean over the dialogues that have one. A dialogue
-- with any judged turn unparsed or missing has no score and is counted in `unparsed` instead (a minimum over a
-- subset could only be too high).
with turns as (
    select * from mtbench101_turns
),

dialogues as (
    select model, judge, task, dialogue_id, min(score) as score, bool_and(parsed) as complete
    from turns
    group by model, judge, task, dialogue_id
),

final as (
    select
        model,
        judge,
        task,
        avg(score) filter (where complete) as score,
        count(*) filter (where complete) as dialogues,
        count(*) filter (where not complete) as unparsed
    from dialogues
    group by model, judge, task
)

select final.* from final join mtbench101_taxonomy t using (task)
order by model, judge, t.position
