-- gameeval_moves: the moves of each model in the current played GameEval games (gameeval_transcripts), one row per
-- (game, model, side); side is the column the game's leaderboard splits a model's rows by (Ask-Guess: the setting;
-- SpyFall: the role played, spy or villager; TofuKingdom: the camp of the role played, prince / queen / spy).
--   games: played games with an entry of the model on that side;
--   moves: its replies (a backend call that failed is no move: it is in the transcript, error 'backend: ...', and
--     counts nowhere, as in Game.event);
--   chat_errors: its moves the host marked invalid (a fallback applied): the games' chat_errors, per model;
--   placeholder_moves: its moves flagged as repeating the prompt's placeholder text ("placeholder: speak",
--     dialogbench/gameeval/placeholders.py): the games' placeholder_moves, per model; never a chat error.
-- Games written before move flags were kept (move_flags null) count no placeholder move.
with events as (
    select cell_key, game, setting, role, model, valid, error, flags
    from {{ ref('gameeval_transcripts') }}
    where model is not null
),

sided as (
    select
        cell_key,
        game,
        model,
        case
            when game = 'askguess' then setting
            when game = 'spyfall' then role
            when role in ('Prince', 'Princess', 'Chef') then 'prince'
            when role in ('Queen', 'Minister', 'Guard') then 'queen'
            when role in ('Spy', 'Maid') then 'spy'
            else role
        end as side,
        starts_with(coalesce(error, ''), 'backend: ') as failed_call,
        coalesce(valid, true) as valid,
        coalesce(flags, '') as flags
    from events
),

final as (
    select
        game,
        model,
        side,
        count(distinct cell_key) as games,
        count(*) filter (where not failed_call) as moves,
        count(*) filter (where not failed_call and not valid) as chat_errors,
        count(*) filter (where not failed_call and contains(flags, 'placeholder: ')) as placeholder_moves
    from sided
    group by game, model, side
)

select * from final
order by game, model, side
