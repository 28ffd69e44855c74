-- gameeval_transcripts: every transcript event of the current GameEval games (gameeval_current, played cells), one
-- row each, in order: the game's cell_key, game, item_id, item, setting, trial, assignment, outcome and finished,
-- `event` (1-based position in the transcript) and every GAMEEVAL_EVENT field (step, round, speaker, role, model,
-- kind, text = what the other players heard, thought = the speaker's private reasoning, target, raw, valid, error),
-- then `flags`: the entry's flags from gameeval_games.move_flags ("placeholder: speak" when the move repeats the
-- prompt's placeholder text, "said its own word"…; null: none, or a game written before flags were kept).
with games as (
    select * from {{ ref('gameeval_current') }} where played
),

events as (
    select
        cell_key,
        game,
        item_id,
        item,
        setting,
        trial,
        assignment,
        outcome,
        finished,
        move_flags,
        unnest(generate_series(1, len(transcript))) as event,
        unnest(transcript) as e
    from games
    where len(transcript) > 0
),

final as (  -- the game's columns, the event's position, every event field (GAMEEVAL_EVENT's order), its flags
    select * exclude (event, e, move_flags), event::integer as event, e.*, move_flags[event] as flags
    from events
)

select * from final
order by game, item_id, cell_key, event
