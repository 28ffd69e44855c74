-- plans: the cells each run asked for (run_id, stage, cell_key, item_id, judge, task), with the models in their
-- roles (`roles`: role -> model, e.g. {'first': a, 'second': b}; `model` is set when the cell has one model) and the
-- `scope` the plan is the latest one for (the cell's models, sorted; [] for a per-stage plan). The metrics read the
-- cells of each scope's most recent plan: current_cells.
select * from {{ source('plans') }}
