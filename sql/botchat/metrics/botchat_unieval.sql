-- botchat_unieval: UniEval pass@N per model, judge and N (BotChat README: a dialogue passes at N when the
-- judge finds no AI, or its first AI utterance comes after the N-th). The cells counted are those of each
-- (model, judge)'s most recent plan; pass@N is read off one judgment of the first n_judged utterances for
-- every 3 <= N <= n_judged.
-- pass_rate follows the authors' rule (BotChat annotations/BrowseAnnotation.ipynb, parse_output / calc_acc):
-- their pass@N reads only the reply's `Index:` line, and a reply without one, or with `Index: None` (also
-- after `Choice: Yes`), counts as a pass at every N. So an unparsed verdict passes at N unless its raw output
-- holds an `Index: <k>` with k <= N (botchat_unieval_passes), and pass_rate = passed / dialogues (unparsed included).
-- pass_rate_parsed is the project's stricter figure: parsed passes over parseable verdicts, unparsed left out.
-- unparsed_passed: how many of `passed` are unparsed verdicts counted by the authors' rule.
-- pass_ci_low / pass_ci_high: the Wilson score 95% interval of pass_rate (passed of dialogues) (the wilson_low / wilson_high macros, sql/core/macros/wilson.sql), null when
-- there is nothing to count.
with verdicts as (
    select * from {{ ref('botchat_unieval_passes') }}
),

counted as (
    select
        model,
        judge,
        n,
        count(*) as dialogues,
        count(*) filter (where parsed_pass or unparsed_pass) as passed,
        count(*) filter (where parsed) as parseable,
        count(*) filter (where not parsed) as unparsed,
        count(*) filter (where unparsed_pass) as unparsed_passed,
        count(*) filter (where parsed_pass) as parsed_passed
    from verdicts
    group by model, judge, n
),

final as (
    select
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
order by n, pass_rate desc nulls last, model
