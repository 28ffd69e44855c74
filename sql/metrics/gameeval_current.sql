-- gameeval_current: the cells of each game's latest GameEval plan (stage gameeval_<game>, the plan of the run that
-- planned it last), so a changed config (fewer rounds, other models) never mixes with older games. One row per
-- planned cell: its latest game (gameeval_games columns) with played = true, or, for a planned cell with no game yet,
-- played = false and only cell_key, game, item_id, setting and assignment set. Such a `missing` cell's assignment is
-- the one of the played cells of the same plan whose plan summary (plans.model) is the same, when that is unambiguous
-- (else null); its Ask-Guess setting is read from the item id ('<word>/<setting>/<trial>'), other games 'default'.
-- plan_run_id / plan_model: the plan the cell belongs to and its readable assignment summary. Unordered (sorting would
-- move every transcript): order in the query that reads it.
with plans as (
    select * from plans where stage in ('gameeval_askguess', 'gameeval_spyfall', 'gameeval_tofukingdom')
),

games as (
    select * from gameeval_games
),

latest_plan as (
    select stage, arg_max(run_id, created_at) as run_id from plans group by stage
),

current_cells as (
    select distinct
        plans.cell_key,
        plans.item_id,
        plans.model as plan_model,
        plans.run_id as plan_run_id,
        substr(plans.stage, length('gameeval_') + 1) as game
    from plans join latest_plan using (stage, run_id)
),

played as (
    select games.*, c.plan_run_id, c.plan_model, true as played
    from current_cells c join games on games.cell_key = c.cell_key
),

summaries as (  -- plan summary -> the one assignment the played cells with that summary have
    select game, plan_model, any_value(assignment) as assignment
    from played
    group by game, plan_model
    having count(distinct assignment::varchar) = 1
),

missing as (
    select
        c.cell_key,
        c.game,
        c.item_id,
        case
            when c.game <> 'askguess' then 'default'
            when c.item_id like '%/without\_description/%' escape '\' then 'without_description'
            when c.item_id like '%/with\_description/%' escape '\' then 'with_description'
        end as setting,
        s.assignment,
        c.plan_run_id,
        c.plan_model,
        false as played
    from current_cells c
    left join summaries s using (game, plan_model)
    where not exists (select 1 from games where games.cell_key = c.cell_key)
),

final as (
    select * from played
    union all by name
    select * from missing
)

select * from final
