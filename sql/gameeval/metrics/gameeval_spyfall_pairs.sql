-- gameeval_spyfall_pairs: GameEval Figure 6, the SpyFall metrics per ordered model pair AND word pair (item =
-- 'spy_word,common_word'; split into spy_word and common_word), as the authors' spyfall/compute_adversarial.py
-- L14-31 computes them for one word pair (gameeval_spyfall averages these rows over the word pairs, L41-48):
-- games = finished games, spy_wins,
-- spy_win_rate = spy_wins / games (null without a finished game), spy_living_rounds (mean over finished games),
-- unfinished, discarded (the most-voted name was no living player: left out of the rates, counted apart), chat_errors,
-- placeholder_moves (moves that repeat the prompt's placeholder text: flagged, never a chat error), over every played
-- game. Planned games not played yet have no word pair and are counted in gameeval_spyfall only.
with games as (
    select
        assignment['spy'] as spy_model,
        assignment['villager'] as villager_model,
        item,
        finished,
        outcome,
        spy_living_rounds,
        chat_errors,
        placeholder_moves
    from {{ ref('gameeval_current') }}
    where game = 'spyfall' and played
),

final as (
    select
        spy_model,
        villager_model,
        item,
        split_part(item, ',', 1) as spy_word,
        split_part(item, ',', 2) as common_word,
        count(*) filter (where finished) as games,
        count(*) filter (where finished and outcome = 'spy') as spy_wins,
        case when count(*) filter (where finished) > 0
             then count(*) filter (where finished and outcome = 'spy') / count(*) filter (where finished) end
             as spy_win_rate,
        avg(spy_living_rounds) filter (where finished) as spy_living_rounds,
        count(*) filter (where not finished and outcome is distinct from 'discarded') as unfinished,
        count(*) filter (where outcome = 'discarded') as discarded,
        coalesce(sum(chat_errors), 0) as chat_errors,
        coalesce(sum(placeholder_moves), 0) as placeholder_moves
    from games
    group by spy_model, villager_model, item
)

select * from final
order by spy_model, villager_model, item
