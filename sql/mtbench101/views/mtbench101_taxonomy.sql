-- mtbench101_taxonomy: tier -> ability -> task of MT-Bench-101 (Table 1, Table 3's column order as `position`), the
-- reference table generated from dialogbench/mtbench101/taxonomy.py (TASKS) by dialogbench/mtbench101/reference.py.
with taxonomy as (
    select * from {{ reference('mtbench101_taxonomy') }}
),

final as (
    select position, task, name, ability, tier from taxonomy
)

select * from final
