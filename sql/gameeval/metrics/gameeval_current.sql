-- gameeval_current: the cells of each game's latest GameEval plan (stage gameeval_<game>; a GameEval plan's scope is
-- [], so the plan of the run that planned the game last: current_cells), so a changed config (fewer rounds, other
-- models) never mixes with older games. One row per planned cell: its latest game (gameeval_games columns), with
-- played = true unless that game ended on backend errors (end_reason 'backend_error': a failed cell, replayed by the
-- next run, scored nowhere: played = false, like a cell with no game yet), or, for a planned cell with no game yet,
-- played = false and only cell_key, game, item_id, setting and assignment set. A missing cell's assignment is its plan's roles (role -> model); its Ask-Guess setting is read
-- from the item id ('<word>/<setting>/<trial>'), other games 'default'. plan_run_id: the plan the cell belongs to.
-- Unordered (sorting would move every transcript): order in the query that reads it.
with current_cells as (
    select * from {{ ref('current_cells') }}
    where stage in ('gameeval_askguess', 'gameeval_spyfall', 'gameeval_tofukingdom')
),

games as (
    select * from {{ ref('gameeval_games') }}
),

cells as (  -- a cell planned twice by one plan (a replayed game) is one cell
    select distinct
        cell_key,
        item_id,
        roles,
        run_id as plan_run_id,
        substr(stage, length('gameeval_') + 1) as game
    from current_cells
),

played as (
    select games.*, c.plan_run_id, games.end_reason is distinct from 'backend_error' as played
    from cells c join games on games.cell_key = c.cell_key
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
        c.roles as assignment,
        c.plan_run_id,
        false as played
    from cells c
    where not exists (select 1 from games where games.cell_key = c.cell_key)
),

final as (
    select * from played
    union all by name
    select * from missing
)

select * from final
