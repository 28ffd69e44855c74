-- plans: the cells each run asked for (run_id, stage, cell_key, item_id, judge, task), with the models in their
-- roles (`roles`: role -> model, e.g. {'first': a, 'second': b}; `model` is set when the cell has one model), the
-- `scope` the plan is the latest one for (the cell's models, sorted; [] for a per-stage plan) and the `board` its run
-- published to (source_with_board: run_boards for plans written before boards were recorded). The metrics read the
-- cells of each scope's most recent plan on the current board: current_cells.
with final as (
    select * from {{ source_with_board('plans') }}
)

select * from final
