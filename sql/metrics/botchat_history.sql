-- botchat_history: metric_history of the botchat family, one row per run and metric series, oldest run first.
with history as (
    select * from {{ ref('metric_history') }}
),

final as (
    select run_id, created_at, board, leaderboard, metric, model, slice, judge, value, ci_low, ci_high, n,
        measured, complete, config_fp
    from history
    where family = 'botchat'
)

select * from final
order by board, leaderboard, metric, model, slice, created_at
