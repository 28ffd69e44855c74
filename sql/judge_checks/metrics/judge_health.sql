-- judge_health: can each judge's verdicts on the current board be used? One row per (judge, protocol) of the current
-- plans' judgments (current_cells of each judge stage): verdicts, unparsed and their share; among the parsed ones the
-- most frequent answer (UniEval's choice and index, the Arena / GTEval verdict, the MT-Bench-101 rating: each verdict
-- table's `answer` columns, see {{ answers() }}), how many verdicts gave it and their share (top_share: 1.0 when the
-- judge said the same thing every time); for ratings, the spread across models of their mean (rating_spread: max -
-- min of the models' mean score; null for non-numeric answers or fewer than two models) and the models judged. The
-- thresholds that turn these into findings are the config's judge_checks (dialogbench/judge_checks/health.py).
with answers as (
    select * from {{ answers() }}
),

current_cells as (
    select distinct cell_key, stage from {{ ref('current_cells') }} where judge is not null
),

verdicts as (
    select answers.*
    from answers
    join current_cells on current_cells.cell_key = answers.cell_key and current_cells.stage = answers.protocol
    qualify row_number() over (partition by answers.cell_key order by answers.parsed desc) = 1
),

counts as (
    select
        judge,
        protocol,
        count(*) as verdicts,
        count(*) filter (where not parsed) as unparsed,
        count(distinct model) as models
    from verdicts
    group by judge, protocol
),

tops as (
    select judge, protocol, answer as top_answer, count(*) as top_count
    from verdicts
    where parsed
    group by judge, protocol, answer
    qualify row_number() over (partition by judge, protocol order by count(*) desc, answer) = 1
),

model_means as (
    select judge, protocol, model, avg(score) as mean_score
    from verdicts
    where parsed and score is not null
    group by judge, protocol, model
),

spreads as (
    select judge, protocol, max(mean_score) - min(mean_score) as rating_spread
    from model_means
    group by judge, protocol
    having count(*) >= 2
),

final as (
    select
        c.judge,
        c.protocol,
        c.verdicts,
        c.unparsed,
        c.unparsed / c.verdicts as unparsed_share,
        c.verdicts - c.unparsed as parsed,
        t.top_answer,
        coalesce(t.top_count, 0) as top_count,
        t.top_count / nullif(c.verdicts - c.unparsed, 0) as top_share,
        s.rating_spread,
        c.models
    from counts c
    left join tops t using (judge, protocol)
    left join spreads s using (judge, protocol)
)

select * from final
order by judge, protocol
