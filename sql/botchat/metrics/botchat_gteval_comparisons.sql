-- botchat_gteval_comparisons: one row per GTEval comparison of each (model, judge)'s most recent plan: the model's
-- dialogue against the human one, both cut to n utterances, in one order (shown_first: the model or 'human').
-- outcome is the model's: win when the judge picks the human conversation as the AI-involved one, tie on both /
-- neither, lose when it picks the model's; null when the verdict could not be parsed.
with judgments as (
    select * from {{ ref('gteval_judgments') }}
),

final as (
    select
        judge,
        model,
        opponent,
        n_judged::integer as n,
        item_id,
        case when position = 1 then model else opponent end as shown_first,
        parsed,
        case
            when not parsed then null
            when winner = 'tie' then 'tie'
            when (position = 1 and winner = 'model_a') or (position = 2 and winner = 'model_b') then 'win'
            else 'lose'
        end as outcome,
        cell_key
    from judgments semi join {{ current_cells('botchat_gteval') }} using (cell_key)
)

select * from final
