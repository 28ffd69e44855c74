-- failures: cells whose latest attempt failed and that no later run has computed (the next run retries them).
with attempts as (
    select * from failure_history
),

resolved as (
    select cell_key from generations
    union all
    select cell_key from judgments
),

final as (
    select * from attempts
    anti join resolved using (cell_key)
    qualify row_number() over (partition by cell_key order by created_at desc) = 1
)

select * from final
