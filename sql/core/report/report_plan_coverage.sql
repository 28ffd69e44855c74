-- report_plan_coverage: how much of each model's current plan its numbers rest on: per stage, judge and model (each
-- model of a cell's roles: an Arena pair's two, a game's players) the cells of current_cells (each scope's latest
-- plan), how many are computed (stored in their table: the same rule as failures, computed_cells()) and how many
-- are missing. The report warns where computed < planned.
with current_cells as (
    select * from {{ ref('current_cells') }}
),

computed as (
    select distinct cell_key from {{ computed_cells() }}
),

cells as (
    select distinct
        current_cells.stage,
        current_cells.judge,
        current_cells.cell_key,
        unnest(map_values(current_cells.roles)) as model,
        computed.cell_key is not null as is_computed
    from current_cells left join computed using (cell_key)
),

final as (
    select
        stage,
        judge,
        model,
        count(distinct cell_key) as planned,
        count(distinct cell_key) filter (where is_computed) as computed,
        count(distinct cell_key) filter (where not is_computed) as missing
    from cells
    where model is not null
    group by stage, judge, model
)

select * from final
order by stage, judge, model
