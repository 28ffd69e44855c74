-- gameeval_transcripts: every transcript event of the current GameEval games (gameeval_current, played cells), one
-- row each, in order: the game's cell_key, game, item_id, item, setting, trial, assignment, outcome and finished,
-- `event` (1-based position in the transcript) and every GAMEEVAL_EVENT field (step, round, speaker, role, model,
-- kind, text = what the other players heard, thought = the speaker's private reasoning, target, raw, valid, error).
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
        unnest(generate_series(1, len(transcript))) as event,
        unnest(transcript) as e
    from games
    where len(transcript) > 0
),

final as (  -- the game's columns, the event's position, then every event field (GAMEEVAL_EVENT's order)
    select * exclude (event, e), event::integer as event, e.*
    from events
)

select * from final
order by game, item_id, cell_key, event
