-- current_cells: the cells of each scope's most recent plan on the current board (current_board), one row per plan
-- row (every plans column). A plan is the latest one for its (board, stage, scope, judge): scope is the cell's models,
-- sorted (['a', 'b'] for an Arena pair, ['m'] for a UniEval / GTEval / MT-Bench-101 model), or [] for a stage whose
-- latest plan replaces all its cells (GameEval). So a board's leaderboards reflect the latest config that ran for each
-- model (pair) on that board, a later run for other models leaves these cells current, and a run on another board
-- (an ad-hoc run with CLI overrides) changes none of them. judge is null for unjudged stages (judge and scope compare
-- with IS NOT DISTINCT FROM).
with plans as (
    select * from {{ ref('plans') }}
    where board is not distinct from (select board from {{ ref('current_board') }})
),

latest_plan as (
    select stage, scope, judge, arg_max(run_id, created_at) as run_id
    from plans
    group by stage, scope, judge
),

final as (
    select plans.*
    from plans
    join latest_plan
        on plans.stage = latest_plan.stage
        and plans.scope is not distinct from latest_plan.scope
        and plans.judge is not distinct from latest_plan.judge
        and plans.run_id = latest_plan.run_id
)

select * from final
