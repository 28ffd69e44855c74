-- report_flagged_examples: the report's flagged UniEval examples: per judge, model and seed, the newest parsed
-- judgment that found AI (choice 'Yes'; ties by cell_key), with its judged dialogue's utterances. `example` numbers
-- each (judge, model)'s seeds 1, 2, ... by item_id then cell_key: the report shows the first few of one judge.
with judgments as (
    select * from {{ ref('unieval_judgments') }}
),

generations as (
    select * from {{ ref('generations') }}
),

flagged as (
    select j.judge, j.model, j.item_id, j.cell_key, j.ai_index, j.reason, j.n_judged, g.utterances
    from judgments j join generations g on j.generation_key = g.cell_key
    where j.parsed and j.choice = 'Yes'
    qualify row_number() over (partition by j.judge, j.model, j.item_id order by j.created_at desc, j.cell_key) = 1
),

final as (
    select *, row_number() over (partition by judge, model order by item_id, cell_key) as example
    from flagged
)

select * from final
