-- plans: the cells each run asked for (run_id, stage, cell_key, item_id, judge, task), with the models in their
-- roles (`roles`: role -> model, e.g. {'first': a, 'second': b}; `model` is set when the cell has one model), the
-- `scope` the plan is the latest one for (the cell's models, sorted; [] for a per-stage plan) and the `board` its run
-- published to (run_boards for plans written before boards were recorded). The metrics read the cells of each
-- scope's most recent plan on the current board: current_cells.
with plans as (
    select * from {{ source('plans') }}
),

run_boards as (
    select run_id, board from {{ ref('run_boards') }}
),

final as (
    select plans.* replace (coalesce(plans.board, run_boards.board) as board)
    from plans left join run_boards using (run_id)
)

select * from final
