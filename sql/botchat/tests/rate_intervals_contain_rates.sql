-- Every Wilson 95% interval lies in [0, 1] and contains its rate (botchat_unieval, botchat_unieval_gt,
-- botchat_gteval, botchat_pair_rates): rows where one does not.
with unieval as (
    select * from {{ ref('botchat_unieval') }}
),

unieval_gt as (
    select * from {{ ref('botchat_unieval_gt') }}
),

gteval as (
    select * from {{ ref('botchat_gteval') }}
),

pair_rates as (
    select * from {{ ref('botchat_pair_rates') }}
),

intervals as (
    select 'botchat_unieval' as view, model as subject, pass_rate as rate, pass_ci_low as low, pass_ci_high as high
    from unieval
    union all
    select 'botchat_unieval_gt', model, pass_rate, pass_ci_low, pass_ci_high from unieval_gt
    union all
    select 'botchat_gteval', model, win_tie_rate, win_tie_ci_low, win_tie_ci_high from gteval
    union all
    select 'botchat_pair_rates', model_a || ' vs ' || model_b, win_rate_a, win_a_ci_low, win_a_ci_high from pair_rates
    union all
    select 'botchat_pair_rates', model_a || ' vs ' || model_b, win_rate_b, win_b_ci_low, win_b_ci_high from pair_rates
    union all
    select 'botchat_pair_rates', model_a || ' vs ' || model_b, tie_rate, tie_ci_low, tie_ci_high from pair_rates
),

final as (
    select * from intervals
    where rate is not null
        and (low is null or high is null or not (0 <= low and low <= rate and rate <= high and high <= 1))
)

select * from final
