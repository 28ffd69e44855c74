-- Every judgment refers to an output that is in the lake: a computed cell of a registered table (a BotChat
-- dialogue, an MT-Bench-101 answer, a new family's output).
with outputs as (
    select cell_key from {{ computed_cells() }}
)

select j.cell_key from {{ ref('judgments') }} j anti join outputs o on j.generation_key = o.cell_key
