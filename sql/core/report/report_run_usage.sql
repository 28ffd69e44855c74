-- report_run_usage: the report's cost and time table: per model and role, what the current board's latest run
-- (latest_runs) spent over all its stages (usage's rows of the run, per stage, added up: backend calls, conversations,
-- tokens, wall seconds, cost where the model has prices; priced: every stage's cost known), most seconds first.
with usage as (
    select * from {{ ref('usage') }}
),

latest as (
    select run_id from {{ ref('latest_runs') }}
    where board is not distinct from (select board from {{ ref('current_board') }})
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
