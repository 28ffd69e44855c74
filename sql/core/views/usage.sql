-- usage: what each run's backend calls cost, one row per (run, model, role, stage), from backend_calls (every call a
-- stage's chunk made, failed ones and re-asked game moves included, written when the chunk ends): batches (backend
-- calls: a batch of conversations each), conversations (requests), failed conversations, prompt_tokens and
-- completion_tokens (the backends' counts), seconds (wall time of the calls: for an endpoint, with its concurrency;
-- for a local engine, its time on the accelerator), cost (from the model's `prices` per million tokens; null when the
-- model has none) and the run's board (source_with_board: run_boards, one board per run). Runs from before calls were
-- recorded have no rows here; stored_usage counts the tokens of every result the lake keeps, whatever run computed it.
with calls as (  -- each call with its run's board
    select * from {{ source_with_board('backend_calls') }}
),

final as (
    select
        run_id,
        model,
        role,
        stage,
        count(*) as batches,
        sum(conversations)::bigint as conversations,
        sum(failed)::bigint as failed,
        sum(prompt_tokens)::bigint as prompt_tokens,
        sum(completion_tokens)::bigint as completion_tokens,
        sum(seconds) as seconds,
        sum(cost) as cost,
        min(started_at) as first_call_at,
        board
    from calls
    group by run_id, model, role, stage, board
)

select * from final
order by first_call_at, model, role, stage
