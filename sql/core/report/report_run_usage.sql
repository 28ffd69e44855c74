-- report_run_usage: the report's cost and time table: per model and role, what the current board's latest run spent
-- (usage: backend calls, conversations, tokens, wall seconds, cost where the model has prices), most seconds first.
with usage as (
    select * from {{ ref('usage') }}
),

latest as (
    select run_id from {{ ref('report_latest_run') }} limit 1
),

final as (
    select
        model,
        role,
        string_agg(distinct stage, ', ' order by stage) as stages,
        sum(batches)::bigint as batches,
        sum(conversations)::bigint as conversations,
        sum(failed)::bigint as failed,
        sum(prompt_tokens)::bigint as prompt_tokens,
        sum(completion_tokens)::bigint as completion_tokens,
        sum(seconds) as seconds,
        sum(cost) as cost,
        count(cost) = count(*) as priced
    from usage semi join latest using (run_id)
    group by model, role
)

select * from final
order by seconds desc, model, role
