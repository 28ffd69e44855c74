-- report_header: the report's header, one row: the current board (current_board) and its latest run (latest_runs: the
-- newest start among the board's runs, ties broken by run_id), the config it ran with (runs.config: the path given to
-- `dialogbench run`; run_config: its effective config as YAML, from run_configs, null for runs before it was recorded),
-- when it started and finished (its stages' first start and last finish), what ran it (commit, versions, host, gpu: as
-- its runs rows recorded them, null for runs before they were), the board's first run, how many runs the board has,
-- and the models and judges of the current plans (current_cells).
with runs as (
    select * from {{ ref('runs') }}
    where board is not distinct from (select board from {{ ref('current_board') }})
),

run_configs as (
    select * from {{ ref('run_configs') }}
),

current_cells as (
    select * from {{ ref('current_cells') }}
),

latest as (
    select run_id from {{ ref('latest_runs') }}
    where board is not distinct from (select board from {{ ref('current_board') }})
),

latest_run as (
    select
        (select run_id from latest) as run_id,
        string_agg(distinct config, ', ' order by config) as config,
        min(started_at) as started_at,
        max(finished_at) as finished_at,
        any_value(commit) as commit,
        any_value(versions) as versions,
        string_agg(distinct host, ', ' order by host) as host,
        any_value(gpu) as gpu
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
    select
        (select board from {{ ref('current_board') }}) as board,
        latest_run.*,
        (select any_value(config) from run_configs where run_id = latest_run.run_id) as run_config,
        history.*,
        players.models,
        judges.judges
    from latest_run, history, players, judges
)

select * from final
