-- gameeval_units: the units GameEval's headline numbers rest on, for their bootstrap intervals and paired comparisons
-- (dialogbench/stats): what the authors average over is the unit.
--   gameeval_askguess.st and .mean_rounds (keys setting): one row per word (its trials share it), value the word's
--   ST percentage / its round (gameeval_askguess_words), weight 1: the view's mean over words;
--   gameeval_spyfall.spy_win_rate and .spy_living_rounds (keys villager_model, model the spy's): one row per word
--   pair with finished games (gameeval_spyfall_pairs), weight 1: the view's mean over word pairs;
--   gameeval_tofukingdom.win_rate (keys camp): one row per finished game, value 1 when the model's camp won.
-- Columns as every family's *_units view (see mtbench101_units).
with words as (
    select * from {{ ref('gameeval_askguess_words') }}
),

pairs as (
    select * from {{ ref('gameeval_spyfall_pairs') }} where games > 0
),

tofu as (
    select cell_key, assignment, outcome
    from {{ ref('gameeval_current') }}
    where game = 'tofukingdom' and played and finished
),

camps as (
    select cell_key, camp, assignment[camp] as model, outcome = camp as won
    from tofu cross join (values ('prince'), ('queen'), ('spy')) as c(camp)
),

final as (
    select 'gameeval_askguess' as leaderboard, 'st' as metric, model, [setting]::varchar[] as key_values,
           '' as stratum, item::varchar as cluster, (100 * st)::double as value, 1.0::double as weight
    from words
    union all
    select 'gameeval_askguess', 'mean_rounds', model, [setting]::varchar[], '', item::varchar, round::double, 1.0
    from words
    where round <> 0
    union all
    select 'gameeval_spyfall', 'spy_win_rate', spy_model, [villager_model]::varchar[], '', item::varchar,
           spy_win_rate::double, 1.0
    from pairs
    union all
    select 'gameeval_spyfall', 'spy_living_rounds', spy_model, [villager_model]::varchar[], '', item::varchar,
           spy_living_rounds::double, 1.0
    from pairs
    where spy_living_rounds is not null
    union all
    select 'gameeval_tofukingdom', 'win_rate', model, [camp]::varchar[], '', cell_key::varchar, won::integer::double,
           1.0
    from camps
    where model is not null
)

select * from final
