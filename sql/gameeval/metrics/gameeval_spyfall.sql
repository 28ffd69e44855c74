-- gameeval_spyfall: GameEval Table 3, one row per ordered model pair of the current SpyFall games (gameeval_current):
-- spy_model plays the spy, villager_model the five villagers. Scored as the GameEval authors' spyfall/
-- compute_adversarial.py scores it: per word pair first (L14-31, over the games it keeps: L21-22 skips the 'exit'
-- games, our outcome 'discarded'), then over the word pairs (L41-48).
--   games, spy_wins: finished games (the paper's successful trials) and those the spy won, over every word pair.
--   word_pairs: word pairs with at least one finished game (the per-pair rows of gameeval_spyfall_pairs that have a
--     rate). A word pair without one has no rate and is in neither mean (the authors' L29 divides by its zero
--     finished games: their script stops there).
--   spy_win_rate, spy_living_rounds: the true mean over those word pairs of each pair's spy wins / finished games and
--     mean spy living rounds (0-1 and rounds; null without a finished game). Not pooled over games: with unequal
--     finished games per pair the two differ.
--   spy_win_rate_published, spy_living_rounds_published: the same per-pair values summed and divided by
--     word_pairs - 1, the formula behind the paper's Table 3 (L47-48: len(res_dict) - 1, 11 pairs over 10, so about
--     10% high; can exceed 1); null below two word pairs. Compare these with the paper.
--   discarded: games the authors' rules discard (the most-voted name was no living player; outcome 'discarded', not
--     finished: in no rate, living rounds or word_pairs); unfinished: the other played games that did not finish
--     (round limit...; left out the same way); chat_errors: invalid moves over every played game; placeholder_moves:
--     moves of every played game that repeat the prompt's placeholder text (flagged, never a chat error: the spy's
--     and the villagers' alike; gameeval_moves splits them by model and role); missing: planned games not played
--     yet, or whose game failed on backend errors (no outcome; replayed by the next run).
--   spy_win_rate_ci_low / _high, spy_living_rounds_ci_low / _high: their 95% intervals, a bootstrap over the word
--     pairs and the games within them, as the board's latest run recorded them (headline): null when it recorded
--     another value or none.
with games as (
    select
        assignment['spy'] as spy_model,
        assignment['villager'] as villager_model,
        played,
        finished,
        outcome,
        chat_errors,
        placeholder_moves
    from {{ ref('gameeval_current') }}
    where game = 'spyfall'
),

counts as (
    select
        spy_model,
        villager_model,
        count(*) filter (where played and finished) as games,
        count(*) filter (where played and finished and outcome = 'spy') as spy_wins,
        count(*) filter (where played and not finished and outcome is distinct from 'discarded') as unfinished,
        count(*) filter (where played and outcome = 'discarded') as discarded,
        coalesce(sum(chat_errors) filter (where played), 0) as chat_errors,
        coalesce(sum(placeholder_moves) filter (where played), 0) as placeholder_moves,
        count(*) filter (where not played) as missing
    from games
    group by spy_model, villager_model
),

word_pairs as (  -- compute_adversarial.py L41-48 over the per-pair values of L14-31
    select
        spy_model,
        villager_model,
        count(*) as word_pairs,
        avg(spy_win_rate) as spy_win_rate,
        avg(spy_living_rounds) as spy_living_rounds,
        case when count(*) > 1 then sum(spy_win_rate) / (count(*) - 1) end as spy_win_rate_published,
        case when count(*) > 1 then sum(spy_living_rounds) / (count(*) - 1) end as spy_living_rounds_published
    from {{ ref('gameeval_spyfall_pairs') }}
    where games > 0
    group by spy_model, villager_model
),

recorded as (  -- the spy's win rate and living rounds: the 95% intervals the board's latest run recorded (headline), of the values it recorded
    select metric, model, slice, raw_value, raw_ci_low, raw_ci_high from {{ ref('headline') }}
    where leaderboard = 'gameeval_spyfall'
),

final as (
    select
        c.spy_model,
        c.villager_model,
        c.games,
        c.spy_wins,
        coalesce(w.word_pairs, 0) as word_pairs,
        w.spy_win_rate,
        w.spy_living_rounds,
        w.spy_win_rate_published,
        w.spy_living_rounds_published,
        c.unfinished,
        c.discarded,
        c.chat_errors,
        c.placeholder_moves,
        c.missing,
        rate.raw_ci_low as spy_win_rate_ci_low,
        rate.raw_ci_high as spy_win_rate_ci_high,
        living.raw_ci_low as spy_living_rounds_ci_low,
        living.raw_ci_high as spy_living_rounds_ci_high
    from counts c
    left join word_pairs w
        on w.spy_model is not distinct from c.spy_model and w.villager_model is not distinct from c.villager_model
    left join recorded rate
        on rate.metric = 'spy_win_rate' and rate.model = c.spy_model
        and rate.slice = 'villager_model=' || c.villager_model and abs(rate.raw_value - w.spy_win_rate) <= 1e-6
    left join recorded living
        on living.metric = 'spy_living_rounds' and living.model = c.spy_model
        and living.slice = 'villager_model=' || c.villager_model
        and abs(living.raw_value - w.spy_living_rounds) <= 1e-6
)

select * from final
order by spy_model, villager_model
