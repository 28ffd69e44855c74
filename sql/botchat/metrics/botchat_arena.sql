-- botchat_arena: one row per BotChat Arena comparison (BotChat README: two dialogues from the same ChatSEED,
-- cut to N utterances, judged side by side; each order is its own comparison). model_a is the model shown first
-- ("Conversation 1"), model_b the one shown second. The judge names the AI-involved conversation(s) (verdict:
-- conversation_1 / conversation_2 / both / neither) and the other side wins: winner is model_a / model_b / tie,
-- null exactly when the verdict could not be parsed. (model_a, model_b, winner) of the parsed rows is the input
-- of `dialogbench elo FILE`. winner_model / loser_model: the winning and the losing side's model name, both null
-- for a tie or an unparsed verdict. The cells are those of each (unordered model pair, judge)'s most recent plan
-- (current_cells: a plan's scope is the pair's two models, sorted).
with judgments as (
    select * from {{ ref('arena_judgments') }}
),

arena as (
    select * from judgments semi join {{ current_cells('botchat_arena') }} using (cell_key)
),

sides as (
    select
        *,
        case when position = 2 then opponent else model end as model_a,
        case when position = 2 then model else opponent end as model_b
    from arena
),

final as (
    select
        judge,
        n_judged::integer as n,
        item_id,
        model_a,
        model_b,
        verdict,
        winner,
        case winner when 'model_a' then model_a when 'model_b' then model_b end as winner_model,
        case winner when 'model_a' then model_b when 'model_b' then model_a end as loser_model,
        parsed,
        reason,
        raw_output,
        cell_key
    from sides
)

select * from final
order by judge, n, item_id, model_a, model_b
