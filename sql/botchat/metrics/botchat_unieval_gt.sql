-- botchat_unieval_gt: the UniEval pass rate at the human dialogue's length (BotChat README, the figure after
-- GTEval), read off the existing UniEval judgments, no new judge calls. For each (model, judge)'s most recent
-- UniEval plan and each judged dialogue whose seed has >= 4 human utterances (the 222-seed subset), pass@L
-- with L = the human dialogue's length: no AI found, or the first AI utterance after the L-th. A dialogue is
-- counted only when it was judged on >= L utterances.
-- pass_rate follows the authors' rule, as botchat_unieval does: an unparsed verdict passes unless its raw
-- output holds an `Index: <k>` with k <= L (botchat_unieval_passes), and stays in the denominator; pass_rate_parsed leaves unparsed out.
-- pass_ci_low / pass_ci_high: the Wilson score 95% interval of pass_rate (passed of dialogues) (the wilson_low / wilson_high macros, sql/core/macros/wilson.sql), null when
-- there is nothing to count.
-- The counts and rates are botchat_unieval_pass_rates' pass@L rows (pass_at 'human_length'), counted as
-- botchat_unieval's.
-- measured / not_measured: false and the reason when the board's latest run refused this judge's numbers on botchat_unieval
-- (not_measured: its judge checks' findings), as the report does; the numbers stay here as computed (`headline`
-- nulls them).
with rates as (
    select * from {{ ref('botchat_unieval_pass_rates') }} where pass_at = 'human_length'
),

refused as (
    select * from {{ ref('not_measured') }} where protocol = 'botchat_unieval'
),

final as (
    select rates.* exclude (pass_at, n, parseable), refused.reason is null as measured, refused.reason as not_measured
    from rates left join refused using (judge)
)

select * from final
order by judge, pass_rate desc nulls last, model
