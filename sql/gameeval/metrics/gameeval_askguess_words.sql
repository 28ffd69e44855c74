-- gameeval_askguess_words: one row per (model, setting, word) of the current played Ask-Guess games: its trials,
-- each outcome's share of them and its round (the authors' per-word figures, see gameeval_askguess, which averages
-- them over the words; gameeval_units resamples them, the word being the unit its trials share).
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

final as (
    select
        model,
        setting,
        item,
        count(*) as trials,
        count(*) filter (where outcome = 'ST') / count(*) as st,
        count(*) filter (where outcome = 'EE') / count(*) as ee,
        count(*) filter (where outcome = 'RLE') / count(*) as rle,
        count(*) filter (where outcome = 'AME') / count(*) as ame,
        count(*) filter (where outcome = 'CE') / count(*) as ce,
        coalesce(
            avg(rounds - case when setting = 'without_description' then 1 else 0 end) filter (where outcome = 'ST'),
            30
        ) as round
    from games
    where played
    group by model, setting, item
)

select * from final
