-- mtbench101_truncation: MT-Bench-101 answers cut at their token limit, per model and task, over each model's current
-- answer cells (the cells of its latest mtbench101_answer:<model> plan on the current board, as current_cells keeps
-- them). The backends keep no finish reason, so an answer counts as cut (truncated) when its completion tokens (the
-- model's own tokenizer, mtbench101_answers.completion_tokens) reach the max_tokens recorded with it
-- (mtbench101_answers.max_tokens: mtbench101.answer_max_tokens, at most half the model's context_window, else the
-- model's max_tokens). Answers stored before max_tokens was recorded have none: they count in unknown_cap, never as
-- cut. share: truncated over the answers with a known limit. A planned turn not answered yet is not counted.
-- Rows in Table 3's task order (position).
with current_cells as (
    select * from {{ ref('current_cells') }}
),

answers as (
    select * from {{ ref('mtbench101_answers') }}
),

taxonomy as (
    select * from {{ ref('mtbench101_taxonomy') }}
),

answer_cells as (
    select distinct cell_key from current_cells where stage like 'mtbench101\_answer:%' escape '\'
),

stored as (  -- each current answer cell's answer (the newest row if written twice)
    select answers.*
    from answers
    semi join answer_cells using (cell_key)
    qualify row_number() over (partition by answers.cell_key order by answers.created_at desc) = 1
),

counts as (
    select
        model,
        task,
        max(max_tokens) as max_tokens,
        count(*) as answers,
        count(*) filter (where max_tokens is not null and completion_tokens >= max_tokens) as truncated,
        count(*) filter (where max_tokens is null) as unknown_cap
    from stored
    group by model, task
),

final as (
    select
        counts.model,
        counts.task,
        taxonomy.position,
        counts.max_tokens,
        counts.answers,
        counts.truncated,
        counts.unknown_cap,
        round(counts.truncated / nullif(counts.answers - counts.unknown_cap, 0), 4) as share
    from counts
    left join taxonomy using (task)
)

select * from final
order by model, position
