-- botchat_gteval: each model against the human (MuTual-Test) dialogues, both cut to the same length, judged in
-- both orders (BotChat README, "Compared to the Ground Truth"). A model wins when the judge picks the human
-- conversation as the AI-involved one, ties on both / neither, loses when it picks the model's. The cells are
-- those of each (model, judge)'s most recent plan.
-- win_tie_rate follows the authors' rule (BotChat botchat/analyze.py: match_answer returns 'unknown', which
-- simple_count counts and the WinRate / TieRate divide by): unparsed verdicts stay in the denominator,
-- win_tie_rate = (win + tie) / comparisons. win_tie_rate_parsed leaves them out: (win + tie) / (win + tie + lose).
-- win_tie_ci_low / win_tie_ci_high: the Wilson score 95% interval of win_tie_rate (win + tie of comparisons), with the
-- two orders of a seed as one cluster: Wilson's formula on the effective number of comparisons (the clustered_wilson_*
-- macros, sql/core/macros/wilson.sql), since the two orders of one seed agree far more often than two seeds do; null
-- when there is nothing to count. The headline number's interval (headline, metric_history) is the cluster bootstrap's.
-- measured / not_measured: false and the reason when the board's latest run refused this judge's numbers on botchat_gteval
-- (not_measured: its judge checks' findings), as the report does; the numbers stay here as computed (`headline`
-- nulls them).
with comparisons as (
    select * from {{ ref('botchat_gteval_comparisons') }}
),

seeds as (  -- both orders of one seed are one cluster: their sums make the interval's design effect
    select
        model,
        judge,
        item_id,
        count(*) filter (where outcome in ('win', 'tie')) as y,
        count(*) as m
    from comparisons
    group by model, judge, item_id
),

clusters as (
    select
        model,
        judge,
        count(*) as seeds,
        sum(y * y) as syy,
        sum(y * m) as sym,
        sum(m * m) as smm
    from seeds
    group by model, judge
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

refused as (
    select * from {{ ref('not_measured') }} where protocol = 'botchat_gteval'
),

final as (
    select
        counted.*,
        round((win + tie) / nullif(comparisons, 0), 4) as win_tie_rate,
        round((win + tie) / nullif(win + tie + lose, 0), 4) as win_tie_rate_parsed,
        clustered_wilson_low(win + tie, comparisons, syy, sym, smm, seeds) as win_tie_ci_low,
        clustered_wilson_high(win + tie, comparisons, syy, sym, smm, seeds) as win_tie_ci_high,
        refused.reason is null as measured,
        refused.reason as not_measured
    from counted join clusters using (model, judge) left join refused using (judge)
)

select * from final
order by judge, win_tie_rate desc nulls last, model
