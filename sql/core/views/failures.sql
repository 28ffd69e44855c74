-- failures: cells whose latest attempt failed and that no later run has computed (the next run retries them).
-- A cell is computed when any lake table that holds cells has a computed row with its key (computed_cells():
-- generations, judgments, MT-Bench-101 answers, GameEval games that did not end on backend errors, ...).
with attempts as (
    select * from {{ ref('failure_history') }}
),

resolved as (
    select cell_key from {{ computed_cells() }}
),

final as (
    select * from attempts
    anti join resolved using (cell_key)
    qualify row_number() over (partition by cell_key order by created_at desc) = 1
)

select * from final
