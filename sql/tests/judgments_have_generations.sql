-- Every judgment refers to a generation that is in the lake (an MT-Bench-101 judgment: to a stored answer).
with outputs as (
    select cell_key from {{ ref('generations') }}
    union all
    select cell_key from {{ ref('mtbench101_answers') }}
)

select j.cell_key from {{ ref('judgments') }} j anti join outputs o on j.generation_key = o.cell_key
