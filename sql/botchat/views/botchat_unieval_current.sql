-- botchat_unieval_current: the UniEval judgments of each (model, judge)'s most recent plan, i.e. the cells
-- the latest config that ran for it asked for (the metrics botchat_unieval and botchat_unieval_gt read these).
with judgments as (
    select * from {{ ref('unieval_judgments') }}
),

current_cells as (
    select cell_key from {{ ref('current_cells') }} where stage = 'botchat_unieval'
),

final as (
    select * from judgments semi join current_cells using (cell_key)
)

select * from final
