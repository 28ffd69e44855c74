-- mtbench101_turns: the judge's 1–10 rating of every judged turn of each (model, judge)'s most recent
-- MT-Bench-101 plan. A planned turn without a judgment (not answered yet, or the judge call failed) has
-- judged = false and a null score; an unparseable rating has judged = true, parsed = false, a null score.
-- `turn` is 0-based, as in the dataset.
with current_cells as (
    select cell_key, item_id, model, judge, task from {{ ref('current_cells') }} where stage = 'mtbench101'
),

judgments as (
    select * from {{ ref('mtbench101_judgments') }}
),

ratings as (
    select cell_key, parsed, score from judgments
    qualify row_number() over (partition by cell_key order by created_at desc) = 1
),

final as (
    select
        c.model,
        c.judge,
        c.task,
        regexp_extract(c.item_id, '^(.*):(\d+)$', 1) as dialogue_id,
        regexp_extract(c.item_id, '^(.*):(\d+)$', 2)::integer as turn,
        r.score::integer as score,
        coalesce(r.parsed, false) as parsed,
        r.cell_key is not null as judged
    from current_cells c left join ratings r using (cell_key)
)

select * from final
order by model, judge, task, dialogue_id, turn
