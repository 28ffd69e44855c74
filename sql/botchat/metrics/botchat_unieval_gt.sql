-- botchat_unieval_gt: the UniEval pass rate at the human dialogue's length (BotChat README, the figure after
-- GTEval), read off the existing UniEval judgments, no new judge calls. For each (model, judge)'s most recent
-- UniEval plan and each judged dialogue whose seed has >= 4 human utterances (the 222-seed subset), pass@L
-- with L = the human dialogue's length: no AI found, or the first AI utterance after the L-th. A dialogue is
-- counted only when it was judged on >= L utterances.
-- pass_rate follows the authors' rule, as botchat_unieval does: an unparsed verdict passes unless its raw
-- output holds an `Index: <k>` with k <= L (botchat_unieval_passes), and stays in the denominator; pass_rate_parsed leaves unparsed out.
-- pass_ci_low / pass_ci_high: the Wilson score 95% interval of pass_rate (passed of dialogues) (the wilson_low / wilson_high macros, sql/core/macros/wilson.sql), null when
-- there is nothing to count.
with passes as (
    select * from {{ ref('botchat_unieval_passes') }}
),

seeds as (
    select * from {{ ref('seeds') }}
),

human as (
    select seed_id as item_id, n_utterances from seeds where n_utterances >= 4
),

at_human_length as (  -- a dialogue judged on fewer than L utterances has no pass@L row
    select passes.*
    from passes join human on passes.item_id = human.item_id and passes.n = human.n_utterances
),

counted as (
    select
        model,
        judge,
        count(*) as dialogues,
        count(*) filter (where parsed_pass or unparsed_pass) as passed,
        count(*) filter (where parsed) as parseable,
        count(*) filter (where not parsed) as unparsed,
        count(*) filter (where unparsed_pass) as unparsed_passed,
        count(*) filter (where parsed_pass) as parsed_passed
    from at_human_length
    group by model, judge
),

final as (
    select
        model,
        judge,
        dialogues,
        passed,
        unparsed,
        unparsed_passed,
        round(passed / dialogues, 4) as pass_rate,
        round(parsed_passed / nullif(parseable, 0), 4) as pass_rate_parsed,
        wilson_low(passed, dialogues) as pass_ci_low,
        wilson_high(passed, dialogues) as pass_ci_high
    from counted
)

select * from final
order by judge, pass_rate desc nulls last, model
