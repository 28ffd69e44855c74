-- An MT-Bench-101 judgment that records a reference form names one of the two (mtbench101.reference), and only a
-- judgment of an MR or GR turn (the tasks judged against a reference solution) records one.
with judgments as (
    select * from {{ ref('mtbench101_judgments') }}
),

plans as (
    select * from {{ ref('plans') }}
),

tasks as (
    select distinct cell_key, task from plans where stage = 'mtbench101_judge'
),

final as (
    select judgments.cell_key, judgments.reference, tasks.task
    from judgments
    left join tasks using (cell_key)
    where judgments.reference is not null
        and (judgments.reference not in ('dialogue', 'turn') or tasks.task not in ('MR', 'GR'))
)

select * from final
