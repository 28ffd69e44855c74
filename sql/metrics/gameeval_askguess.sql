-- gameeval_askguess: GameEval Table 2, one row per (model, setting) of the current Ask-Guess games (gameeval_current;
-- the questioner and the answerer are the same model). st, ee, rle, ame, ce are PERCENTAGES (0-100) computed as in
-- the paper (§3.1, §4.3): each outcome's share of a word's trials, averaged over the words, so every word weighs
-- the same whatever its trial count. Every played trial counts, CE (chat/backend errors) included. mean_rounds: mean
-- Q&A rounds of the successful (ST) games. words / trials: words and games played; missing: planned games not
-- played yet (not in any share).
with games as (
    select
        assignment['questioner'] as model,
        setting,
        item,
        outcome,
        rounds,
        played
    from {{ ref('gameeval_current') }}
    where game = 'askguess'
),

words as (
    select
        model,
        setting,
        item,
        count(*) as trials,
        count(*) filter (where outcome = 'ST') / count(*) as st,
        count(*) filter (where outcome = 'EE') / count(*) as ee,
        count(*) filter (where outcome = 'RLE') / count(*) as rle,
        count(*) filter (where outcome = 'AME') / count(*) as ame,
        count(*) filter (where outcome = 'CE') / count(*) as ce
    from games
    where played
    group by model, setting, item
),

per_word as (
    select
        model,
        setting,
        count(*) as words,
        sum(trials) as trials,
        100 * avg(st) as st,
        100 * avg(ee) as ee,
        100 * avg(rle) as rle,
        100 * avg(ame) as ame,
        100 * avg(ce) as ce
    from words
    group by model, setting
),

per_model as (
    select
        model,
        setting,
        avg(rounds) filter (where played and outcome = 'ST') as mean_rounds,
        count(*) filter (where not played) as missing
    from games
    group by model, setting
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
        m.mean_rounds,
        m.missing
    from per_model m
    left join per_word w using (model, setting)
)

select * from final
order by setting, model
