-- botchat_gteval: each model against the human (MuTual-Test) dialogues, both cut to the same length, judged in
-- both orders (BotChat README, "Compared to the Ground Truth"). A model wins when the judge picks the human
-- conversation as the AI-involved one, ties on both / neither, loses when it picks the model's. The cells are
-- those of each (model, judge)'s most recent plan.
-- win_tie_rate follows the authors' rule (BotChat botchat/analyze.py: match_answer returns 'unknown', which
-- simple_count counts and the WinRate / TieRate divide by): unparsed verdicts stay in the denominator,
-- win_tie_rate = (win + tie) / comparisons. win_tie_rate_parsed leaves them out: (win + tie) / (win + tie + lose).
-- win_tie_ci_low / win_tie_ci_high: the Wilson score 95% interval of win_tie_rate (win + tie of comparisons) (the wilson_low / wilson_high macros, sql/core/macros/wilson.sql), null when
-- there is nothing to count.
with comparisons as (
    select * from {{ ref('botchat_gteval_comparisons') }}
),

counted as (
    select
        model,
        judge,
        count(*) as comparisons,
        count(*) filter (where outcome = 'win') as win,
        count(*) filter (where outcome = 'tie') as tie,
        count(*) filter (where outcome = 'lose') as lose,
        count(*) filter (where not parsed) as unparsed
    from comparisons
    group by model, judge
),

final as (
    select
        *,
        round((win + tie) / nullif(comparisons, 0), 4) as win_tie_rate,
        round((win + tie) / nullif(win + tie + lose, 0), 4) as win_tie_rate_parsed,
        wilson_low((win + tie), comparisons) as win_tie_ci_low,
        wilson_high((win + tie), comparisons) as win_tie_ci_high
    from counted
)

select * from final
order by judge, win_tie_rate desc nulls last, model
