-- report_header: the report's header, one row: the latest run (the run_id of the newest started_at), the config
-- it ran with (runs.config: the path given to `dialogbench run`), when it started and finished, the first run in
-- the lake, how many runs, and the models and judges of the current plans (current_cells).
with runs as (
    select * from {{ ref('runs') }}
),

current_cells as (
    select * from {{ ref('current_cells') }}
),

latest as (
    select arg_max(run_id, started_at) as run_id from runs
),

latest_run as (
    select
        any_value(run_id) as run_id,
        string_agg(distinct config, ', ' order by config) as config,
        min(started_at) as started_at,
        max(finished_at) as finished_at
    from runs semi join latest using (run_id)
),

history as (
    select min(started_at) as first_started_at, count(distinct run_id) as runs from runs
),

players as (
    select list(distinct model order by model) as models
    from (select unnest(map_values(roles)) as model from current_cells)
    where model is not null
),

judges as (
    select list(distinct judge order by judge) as judges from current_cells where judge is not null
),

final as (
    select latest_run.*, history.*, players.models, judges.judges
    from latest_run, history, players, judges
)

select * from final
