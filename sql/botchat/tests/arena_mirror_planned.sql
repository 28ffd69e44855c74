-- Every BotChat Arena comparison has its mirror order (the same two models, shown the other way round) in the same
-- current plan, for the same seed and judge.
with arena as (
    select * from {{ ref('botchat_arena') }}
),

arena_cells as (
    select * from {{ current_cells('botchat_arena') }}
)

select a.cell_key, a.judge, a.item_id, a.model_a, a.model_b
from arena a
anti join arena_cells p
    on p.judge = a.judge and p.item_id = a.item_id and p.roles['first'] = a.model_b and p.roles['second'] = a.model_a
