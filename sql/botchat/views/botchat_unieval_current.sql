-- botchat_unieval_current: the UniEval judgments of each (model, judge)'s most recent plan, i.e. the cells
-- the latest config that ran for it asked for (the metrics botchat_unieval and botchat_unieval_gt read these, through
-- botchat_unieval_passes and botchat_unieval_pass_rates).
with judgments as (
    select * from {{ ref('unieval_judgments') }}
),

final as (
    select * from judgments semi join {{ current_cells('botchat_unieval') }} using (cell_key)
)

select * from final
