-- botchat_unieval_gt: the UniEval pass rate at the human dialogue's length (BotChat README, the figure after
-- GTEval), read off the existing UniEval judgments, no new judge calls. For each (model, judge)'s most recent
-- UniEval plan and each judged dialogue whose seed has >= 4 human utterances (the 222-seed subset), pass@L
-- with L = the human dialogue's length: no AI found, or the first AI utterance after the L-th. A dialogue is
-- counted only when it was judged on >= L utterances. Unparsed verdicts are counted, not in the denominator.
with unieval as (
    select * from {{ ref('botchat_unieval_current') }}
),

seeds as (
    select * from {{ ref('seeds') }}
),

human as (
    select seed_id as item_id, n_utterances from seeds where n_utterances >= 4
),

at_human_length as (
    select unieval.model, unieval.judge, unieval.parsed, unieval.choice, unieval.ai_index, human.n_utterances as l
    from unieval join human using (item_id)
    where unieval.n_judged >= human.n_utterances
),

final as (
    select
        model,
        judge,
        count(*) as dialogues,
        count(*) filter (where parsed and (choice = 'No' or ai_index > l)) as passed,
        count(*) filter (where not parsed) as unparsed,
        round(count(*) filter (where parsed and (choice = 'No' or ai_index > l))
              / nullif(count(*) filter (where parsed), 0), 4) as pass_rate
    from at_human_length
    group by model, judge
)

select * from final
order by judge, pass_rate desc nulls last, model
