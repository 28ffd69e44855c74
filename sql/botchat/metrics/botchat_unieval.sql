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
-- The counts and rates are botchat_unieval_pass_rates' pass@N rows (pass_at 'n'), counted as botchat_unieval_gt's.
-- measured / not_measured: false and the reason when the board's latest run refused this judge's numbers on botchat_unieval
-- (not_measured: its judge checks' findings), as the report does; the numbers stay here as computed (`headline`
-- nulls them).
with rates as (
    select * from {{ ref('botchat_unieval_pass_rates') }} where pass_at = 'n'
),

refused as (
    select * from {{ ref('not_measured') }} where protocol = 'botchat_unieval'
),

final as (
    select rates.* exclude (pass_at), refused.reason is null as measured, refused.reason as not_measured
    from rates left join refused using (judge)
)

select * from final
order by n, pass_rate desc nulls last, model
