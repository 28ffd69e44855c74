-- botchat_units: the units BotChat's headline numbers rest on, for their bootstrap intervals and paired comparisons
-- (dialogbench/stats): the seed (one ChatSEED) is the independent unit.
--   botchat_unieval.pass_rate (keys judge, n): one row per dialogue (a model's continuation of a seed), value 1 when
--   it passes at N by the authors' rule (botchat_unieval_passes), else 0;
--   botchat_gteval.win_tie_rate (keys judge): one row per seed, value its share of wins and ties over its comparisons
--   (both orders, unparsed ones included as the view counts them), weight its comparisons: the two orders of one seed
--   are one unit, not two independent trials.
-- Columns as every family's *_units view (see mtbench101_units).
with passes as (
    select * from {{ ref('botchat_unieval_passes') }}
),

comparisons as (
    select * from {{ ref('botchat_gteval_comparisons') }}
),

gteval_seeds as (
    select
        model,
        judge,
        item_id,
        count(*) filter (where outcome in ('win', 'tie')) / count(*) as value,
        count(*) as weight
    from comparisons
    group by model, judge, item_id
),

final as (
    select
        'botchat_unieval' as leaderboard,
        'pass_rate' as metric,
        model,
        [judge, n::varchar]::varchar[] as key_values,
        '' as stratum,
        item_id::varchar as cluster,
        (parsed_pass or unparsed_pass)::integer::double as value,
        1.0::double as weight
    from passes
    union all
    select
        'botchat_gteval' as leaderboard,
        'win_tie_rate' as metric,
        model,
        [judge]::varchar[] as key_values,
        '' as stratum,
        item_id::varchar as cluster,
        value::double as value,
        weight::double as weight
    from gteval_seeds
)

select * from final
