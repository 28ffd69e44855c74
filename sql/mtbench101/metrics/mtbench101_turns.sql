-- mtbench101_turns: the judge's 1–10 rating of every judged turn of each (model, judge)'s most recent
-- MT-Bench-101 plan. A planned turn without a judgment (not answered yet, or the judge call failed) has
-- judged = false and a null score; an unparseable rating has judged = true, parsed = false, a null score.
-- `turn` is 0-based, as in the dataset. question: the turn's user message (what the answer answers), as stored with
-- the judged answer (mtbench101_answers.question), else with the newest stored answer to the same dialogue turn by
-- any model (a turn not judged yet); null when no answer to the turn was stored since answers kept their question.
-- opencompass_score: the rating OpenCompass would read from the same reply (summarizers/subjective/mtbench101.py,
-- post_process_mtbench101: the FIRST match of \[([0-9]+)\], no range check), null when it finds none; the
-- project's `score` reads the last [[n]] and checks 1..10 (dialogbench/mtbench101/rating.py).
-- opencompass_differs: the two rules read this judged reply differently (one null and not the other, or unequal).
-- reference: the MR / GR reference solution the judge was shown (mtbench101.reference): 'dialogue' (the golden
-- dialogue through the turn's golden reply, as OpenCompass) or 'turn' (that reply alone); null for the other tasks
-- and for a turn not judged. A judged MR / GR reply stored before the form was recorded (judgments.reference null)
-- was shown the turn's reply alone, the only form then: 'turn'.
with current_cells as (
    select cell_key, item_id, model, judge, task from {{ current_cells('mtbench101_judge') }}
),

judgments as (
    select * from {{ ref('mtbench101_judgments') }}
),

answers as (
    select * from {{ ref('mtbench101_answers') }}
),

ratings as (
    select
        cell_key,
        generation_key,
        parsed,
        score,
        reference,
        try_cast(nullif(regexp_extract(raw_output, '\[([0-9]+)\]', 1), '') as bigint) as opencompass_score
    from judgments
    qualify row_number() over (partition by cell_key order by created_at desc) = 1
),

answer_questions as (  -- the question stored with each answer (its cell, the newest row if written twice)
    select cell_key as generation_key, arg_max(question, created_at) as question
    from answers
    where question is not null
    group by cell_key
),

turn_questions as (  -- the newest question stored for each dialogue turn, whichever model answered it
    select task, dialogue_id, turn, arg_max(question, created_at) as question
    from answers
    where question is not null
    group by task, dialogue_id, turn
),

turns as (
    select
        *,
        regexp_extract(item_id, '^(.*):(\d+)$', 1) as dialogue_id,
        regexp_extract(item_id, '^(.*):(\d+)$', 2)::integer as turn
    from current_cells
),

final as (
    select
        c.model,
        c.judge,
        c.task,
        c.dialogue_id,
        c.turn,
        coalesce(a.question, t.question) as question,
        r.score::integer as score,
        coalesce(r.parsed, false) as parsed,
        r.cell_key is not null as judged,
        r.opencompass_score,
        r.cell_key is not null and r.score is distinct from r.opencompass_score as opencompass_differs,
        case when r.cell_key is not null and c.task in ('MR', 'GR') then coalesce(r.reference, 'turn') end as reference
    from turns c
    left join ratings r using (cell_key)
    left join answer_questions a on a.generation_key = r.generation_key
    left join turn_questions t on t.task = c.task and t.dialogue_id = c.dialogue_id and t.turn = c.turn
)

select * from final
order by model, judge, task, dialogue_id, turn
