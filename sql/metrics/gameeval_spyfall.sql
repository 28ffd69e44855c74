-- gameeval_spyfall: GameEval Table 3, one row per ordered model pair of the current SpyFall games (gameeval_current):
-- spy_model plays the spy, villager_model the five villagers. As in the paper, only successful trials (games that
-- ended by the rules) are scored: games = finished games, spy_wins = those the spy won, spy_win_rate = spy_wins /
-- games (0-1, null without a finished game), spy_living_rounds = mean rounds the spy took part in, over the finished
-- games. discarded: games the authors' rules discard (the most-voted name was no living player; outcome
-- 'discarded', not finished: left out of the rates and living rounds, as the authors' compute_adversarial.py skips
-- them); unfinished: the other played games that did not finish (round limit, backend error...; left out of the
-- rates); chat_errors: invalid or failed moves over every played game; missing: planned games not played yet.
with games as (
    select
        assignment['spy'] as spy_model,
        assignment['villager'] as villager_model,
        played,
        finished,
        outcome,
        spy_living_rounds,
        chat_errors
    from {{ ref('gameeval_current') }}
    where game = 'spyfall'
),

final as (
    select
        spy_model,
        villager_model,
        count(*) filter (where played and finished) as games,
        count(*) filter (where played and finished and outcome = 'spy') as spy_wins,
        case when count(*) filter (where played and finished) > 0
             then count(*) filter (where played and finished and outcome = 'spy')
                  / count(*) filter (where played and finished) end as spy_win_rate,
        avg(spy_living_rounds) filter (where played and finished) as spy_living_rounds,
        count(*) filter (where played and not finished and outcome is distinct from 'discarded') as unfinished,
        count(*) filter (where played and outcome = 'discarded') as discarded,
        coalesce(sum(chat_errors) filter (where played), 0) as chat_errors,
        count(*) filter (where not played) as missing
    from games
    group by spy_model, villager_model
)

select * from final
order by spy_model, villager_model
