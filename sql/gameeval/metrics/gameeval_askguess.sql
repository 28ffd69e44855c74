-- gameeval_askguess: GameEval Table 2, one row per (model, setting) of the current Ask-Guess games (gameeval_current;
-- the questioner and the answerer are the same model), scored as the GameEval authors' askguess/compute.py does
-- (jordddan/GameEval; the code behind the paper's numbers). Every played trial counts, CE (chat errors: an empty
-- reply) included; a game that failed on backend errors is not played (no outcome: it counts under missing).
-- st, ee, rle, ame, ce: PERCENTAGES (0-100): each outcome's share of a word's trials, averaged over the words, so
--   every word weighs the same whatever its trial count (compute.py L33-43 counts outcomes per word, L70-74 divides
--   their sums by words x n, the trials per word: with n trials of every word, the per-word shares' mean).
-- mean_rounds: the authors' Round. A successful game's round is its questions asked with the prior description and
--   its questions - 1 without it (game_askguess.py L118: cnt - 1, the description counting in cnt, L61); a word's
--   round is the mean over its ST games, 30 for a word with no ST game (compute.py L45-49), and mean_rounds is
--   the mean over the words whose round is not 0 (L63-72: cnt_correct counts words with round != 0, so a word
--   never guessed weighs 30 and one only ever guessed at the first question without description is left out).
-- placeholder_moves: moves of the played games that repeat the prompt's placeholder text (flagged, never a chat error;
--   Ask-Guess replies are plain text and its prompts show no JSON to copy, so 0 unless that changes), beside ce.
-- words / trials: words and games played; missing: planned games not played yet or failed on backend errors (not in
-- any share; the next run plays them).
-- matchers_differ: played games the other matcher would end at another point or with another outcome
--   (gameeval_askguess_matchers: the authors' substring guess and ' word ' mention against whole words).
-- st_ci_low / st_ci_high, mean_rounds_ci_low / mean_rounds_ci_high: their 95% intervals, a bootstrap over the words,
--   as the board's latest run recorded them (headline; dialogbench/stats): null when it recorded another value or none.
with games as (
    select
        assignment['questioner'] as model,
        setting,
        item,
        outcome,
        rounds,
        played,
        placeholder_moves
    from {{ ref('gameeval_current') }}
    where game = 'askguess'
),

words as (
    select * from {{ ref('gameeval_askguess_words') }}
),

matchers as (
    select model, setting, count(*) filter (where differ) as matchers_differ
    from {{ ref('gameeval_askguess_matchers') }}
    group by model, setting
),

per_word as (
    select
        model,
        setting,
        count(*) as words,
        sum(trials)::bigint as trials,
        100 * avg(st) as st,
        100 * avg(ee) as ee,
        100 * avg(rle) as rle,
        100 * avg(ame) as ame,
        100 * avg(ce) as ce,
        avg(round) filter (where round <> 0) as mean_rounds
    from words
    group by model, setting
),

per_model as (
    select
        model,
        setting,
        count(*) filter (where not played) as missing,
        coalesce(sum(placeholder_moves) filter (where played), 0) as placeholder_moves
    from games
    group by model, setting
),

recorded as (  -- ST and Round: the 95% intervals the board's latest run recorded (headline), of the values it recorded
    select metric, model, slice, raw_value, raw_ci_low, raw_ci_high from {{ ref('headline') }}
    where leaderboard = 'gameeval_askguess'
),

final as (
    select
        model,
        setting,
        coalesce(w.words, 0) as words,
        coalesce(w.trials, 0) as trials,
        w.st,
        w.ee,
        w.rle,
        w.ame,
        w.ce,
        m.placeholder_moves,
        w.mean_rounds,
        m.missing,
        coalesce(d.matchers_differ, 0) as matchers_differ,
        st.raw_ci_low as st_ci_low,
        st.raw_ci_high as st_ci_high,
        r.raw_ci_low as mean_rounds_ci_low,
        r.raw_ci_high as mean_rounds_ci_high
    from per_model m
    left join per_word w using (model, setting)
    left join matchers d using (model, setting)
    left join recorded st
        on st.metric = 'st' and st.model = m.model and st.slice = 'setting=' || m.setting
        and abs(st.raw_value - w.st) <= 1e-6
    left join recorded r
        on r.metric = 'mean_rounds' and r.model = m.model and r.slice = 'setting=' || m.setting
        and abs(r.raw_value - w.mean_rounds) <= 1e-6
)

select * from final
order by setting, model
