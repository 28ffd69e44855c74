-- plans: the cells each run asked for (run_id, stage, cell_key, item_id, model, judge); metrics read each
-- (model, judge)'s most recent plan, so a leaderboard reflects the latest config that ran for it.
select * from {{ source('plans') }}
