-- current_board: the board the board-scoped views read (current_cells and every metric over it, botchat_elo, changes,
-- the report's run and header), one row: the session variable `board` when it is set (`dialogbench query --board NAME`,
-- a run its own board; in plain DuckDB: SET VARIABLE board = 'NAME'), else default_board. Null on a lake with no run
-- recorded: the board-scoped views then read the plans, ratings and snapshots whose board is unknown.
with chosen as (
    select getvariable('board')::varchar as board
),

final as (
    select coalesce((select board from chosen), (select board from {{ ref('default_board') }})) as board
)

select * from final
