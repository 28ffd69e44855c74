-- mtbench101_dialogues: one row per (model, judge, task, dialogue) of mtbench101_turns: its score, the MINIMUM rating
-- over its judged turns (§3.4); complete when every turn's rating was read (a minimum over a subset could only be too
-- high, so an incomplete dialogue has no score in mtbench101_tasks); judged when every turn was judged;
-- opencompass_score the minimum over the turns OpenCompass's parser reads. mtbench101_tasks averages them per task,
-- mtbench101_units lists the scored ones for the bootstrap.
with turns as (
    select * from {{ ref('mtbench101_turns') }}
),

final as (
    select
        model,
        judge,
        task,
        dialogue_id,
        min(score) as score,
        bool_and(parsed) as complete,
        min(opencompass_score) as opencompass_score,
        bool_and(judged) as judged
    from turns
    group by model, judge, task, dialogue_id
)

select * from final
