-- report_gameeval_status: the report's GameEval intro, per game of the current plans (gameeval_current): games
-- planned, played, finished / unfinished / discarded (of the played; discarded: SpyFall games whose most-voted name
-- was no living player, which the authors' rules discard), missing (planned and not played, or whose latest game
-- ended on backend errors), backend_errors (of those missing: games that ended on backend errors, replayed by the
-- next run), and the chat errors and placeholder moves (moves that repeat the prompt's placeholder text: flagged,
-- never a chat error) of every played game.
with current_games as (
    select * from {{ ref('gameeval_current') }}
),

final as (
    select
        game,
        count(*) as planned,
        count(*) filter (where played) as played,
        count(*) filter (where played and finished) as finished,
        count(*) filter (where played and not finished and outcome is distinct from 'discarded') as unfinished,
        count(*) filter (where played and outcome = 'discarded') as discarded,
        count(*) filter (where not played) as missing,
        count(*) filter (where end_reason = 'backend_error') as backend_errors,
        coalesce(sum(chat_errors) filter (where played), 0) as chat_errors,
        coalesce(sum(placeholder_moves) filter (where played), 0) as placeholder_moves
    from current_games
    group by game
)

select * from final
