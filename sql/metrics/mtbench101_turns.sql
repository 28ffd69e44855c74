-- mtbench101_turns: the judge's 1–10 rating of every judged turn of each (model, judge)'s most recent
-- MT-Bench-101 plan. A planned turn without a judgment (not answered yet, or the judge call failed) has
-- judged = false and a null score; an unparseable rating has judged = true, parsed = false, a null score.
-- `turn` is 0-based, as in the dataset.
-- opencompass_score: the rating OpenCompass would read from the same reply (summarizers/subjective/mtbench101.py,
-- post_process_mtbench101: the FIRST match of \[([0-9]+)\], no range check), null when it finds none; the
-- project's `score` reads the last [[n]] and checks 1..10 (dialogbench/mtbench101/rating.py).
-- opencompass_differs: the two rules read this judged reply differently (one null and not the other, or unequal).
with current_cells as (
    select cell_key, item_id, model, judge, task from {{ ref('current_cells') }} where stage = 'mtbench101'
),

judgments as (
    select * from {{ ref('mtbench101_judgments') }}
),

ratings as (
    select
        cell_key,
        parsed,
        score,
        try_cast(nullif(regexp_extract(raw_output, '\[([0-9]+)\]', 1), '') as bigint) as opencompass_score
    from judgments
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
        r.cell_key is not null as judged,
        r.opencompass_score,
        r.cell_key is not null and r.score is distinct from r.opencompass_score as opencompass_differs
    from current_cells c left join ratings r using (cell_key)
)

select * from final
order by model, judge, task, dialogue_id, turn
