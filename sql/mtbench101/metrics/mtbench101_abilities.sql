-- mtbench101_abilities: the score of each second-tier ability, the mean of its tasks' scores (§4.2); null
-- unless every task of the ability has a score, so a partial run is never ranked beside a complete one.
with tasks as (
    select * from {{ ref('mtbench101_tasks') }}
),

taxonomy as (
    select * from {{ ref('mtbench101_taxonomy') }}
),

runs as (
    select distinct model, judge from tasks
),

cells as (
    select runs.model, runs.judge, taxonomy.ability, taxonomy.tier, taxonomy.position, tasks.score
    from runs cross join taxonomy
    left join tasks on tasks.model = runs.model and tasks.judge = runs.judge and tasks.task = taxonomy.task
),

final as (
    select
        model,
        judge,
        ability,
        tier,
        case when count(score) = count(*) then avg(score) end as score,
        count(score) as tasks_scored,
        count(*) as tasks,
        min(position) as position  -- the ability's first column in Table 3
    from cells
    group by model, judge, ability, tier
)

select * exclude (position) from final
order by model, judge, position
