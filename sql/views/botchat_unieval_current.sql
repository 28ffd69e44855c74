-- botchat_unieval_current: the UniEval judgments of each (model, judge)'s most recent plan, i.e. the cells
-- the latest config that ran for it asked for (the metrics botchat_unieval and botchat_unieval_gt read these).
with plans as (
    select * from plans where stage = 'botchat_unieval'
),

latest_plan as (
    select model, judge, arg_max(run_id, created_at) as run_id from plans group by model, judge
),

current_cells as (
    select plans.cell_key from plans join latest_plan using (model, judge, run_id)
),

final as (
    select * from judgments semi join current_cells using (cell_key)
)

select * from final
