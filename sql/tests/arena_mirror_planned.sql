-- Every BotChat Arena comparison has its mirror order (the same two models, shown the other way round) planned
-- for the same seed and judge.
select a.cell_key, a.judge, a.item_id, a.model_a, a.model_b
from botchat_arena a
anti join (select * from plans where stage = 'botchat_arena') p
    on p.judge = a.judge and p.item_id = a.item_id and p.model = a.model_b || ' vs ' || a.model_a
