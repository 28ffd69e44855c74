-- botchat_unieval_pass_rates: the UniEval pass counts and rates of the current verdicts (botchat_unieval_passes), one
-- row per (pass_at, model, judge, n), counted by one rule for both UniEval metrics:
--   pass_at 'n': every verdict at every N it answers for (3 <= N <= n_judged), one row per N (botchat_unieval);
--   pass_at 'human_length': each dialogue whose seed has >= 4 human utterances (the 222-seed subset) at L = the
--     human dialogue's length only, n null (botchat_unieval_gt); a dialogue judged on fewer than L utterances has no
--     pass@L row, so it is not counted.
-- dialogues: the verdicts counted; passed: those that pass (parsed ones, and unparsed ones by the authors' rule:
-- botchat_unieval_passes); parseable / unparsed; unparsed_passed: how many of `passed` are unparsed. pass_rate =
-- passed / dialogues (unparsed included); pass_rate_parsed: parsed passes over parseable verdicts, unparsed left out.
-- pass_ci_low / pass_ci_high: the Wilson score 95% interval of pass_rate (passed of dialogues) (the wilson_low /
-- wilson_high macros, sql/core/macros/wilson.sql), null when there is nothing to count.
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

counted_sets as (
    select 'n' as pass_at, * from passes
    union all
    select 'human_length' as pass_at, * replace (null::integer as n) from at_human_length
),

counted as (
    select
        pass_at,
        model,
        judge,
        n,
        count(*) as dialogues,
        count(*) filter (where parsed_pass or unparsed_pass) as passed,
        count(*) filter (where parsed) as parseable,
        count(*) filter (where not parsed) as unparsed,
        count(*) filter (where unparsed_pass) as unparsed_passed,
        count(*) filter (where parsed_pass) as parsed_passed
    from counted_sets
    group by pass_at, model, judge, n
),

final as (
    select
        pass_at,
        model,
        judge,
        n,
        dialogues,
        passed,
        parseable,
        unparsed,
        unparsed_passed,
        round(passed / dialogues, 4) as pass_rate,
        round(parsed_passed / nullif(parseable, 0), 4) as pass_rate_parsed,
        wilson_low(passed, dialogues) as pass_ci_low,
        wilson_high(passed, dialogues) as pass_ci_high
    from counted
)

select * from final
