-- mtbench101_turn_curves: mean rating per turn of each task (MT-Bench-101 figure 4's curves), per model and
-- judge; `n` is the number of parsed ratings averaged. `turn` is 0-based (figure 4's turn 1 is turn 0).
with turns as (
    select * from {{ ref('mtbench101_turns') }} where parsed
),

final as (
    select model, judge, task, turn, avg(score) as score, count(*) as n
    from turns
    group by model, judge, task, turn
)

select * from final
order by model, judge, task, turn
