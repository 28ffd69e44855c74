-- judge_probe_cells: the known-answer probe cells the current board counts (current_cells of the judge_probe:*
-- stages), one row per cell, its latest copy: every judge_probes column. What judge_probes, judge_probe_orders and
-- judge_verbosity grade.
with current_cells as (
    select distinct cell_key from {{ ref('current_cells') }} where stage like 'judge\_probe:%' escape '\'
),

final as (
    select p.*
    from {{ source('judge_probes') }} p semi join current_cells using (cell_key)
    qualify row_number() over (partition by p.cell_key order by p.created_at desc) = 1
)

select * from final
