-- A game's placeholder_moves is the number of its transcript entries flagged "placeholder: ..." in move_flags (what
-- gameeval_moves counts per model and the leaderboards sum), for games that kept both.
with games as (
    select cell_key, placeholder_moves, move_flags
    from {{ ref('gameeval_games') }}
    where placeholder_moves is not null and move_flags is not null
),

flags as (
    select cell_key, unnest(move_flags) as flag
    from games
),

flagged as (
    select cell_key, count(*) filter (where contains(flag, 'placeholder: ')) as flagged
    from flags
    group by cell_key
),

final as (
    select g.cell_key, g.placeholder_moves, coalesce(f.flagged, 0) as flagged
    from games g
    left join flagged f using (cell_key)
)

select * from final
where flagged <> placeholder_moves
