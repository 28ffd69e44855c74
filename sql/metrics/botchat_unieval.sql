-- botchat_unieval: UniEval pass@N per model, judge and N (BotChat README: a dialogue passes at N when the
-- judge finds no AI, or its first AI utterance comes after the N-th). The cells counted are those of each
-- (model, judge)'s most recent plan; pass@N is read off one judgment of the first n_judged utterances for
-- every 3 <= N <= n_judged. Unparseable verdicts are counted, and left out of pass_rate's denominator.
with plans as (
    select * from plans where stage = 'botchat_unieval'
),

latest_plan as (
    select model, judge, arg_max(run_id, created_at) as run_id from plans group by model, judge
),

current_cells as (
    select plans.cell_key from plans join latest_plan using (model, judge, run_id)
),

unieval as (
    select * from judgments semi join current_cells using (cell_key)
),

per_n as (
    select model, judge, item_id, parsed, choice, ai_index, unnest(generate_series(3, n_judged)) as n
    from unieval
),

final as (
    select
        model,
        judge,
        n::integer as n,
        count(*) as dialogues,
        count(*) filter (where parsed and (choice = 'No' or ai_index > n)) as passed,
        count(*) filter (where parsed) as parseable,
        count(*) filter (where not parsed) as unparsed,
        round(count(*) filter (where parsed and (choice = 'No' or ai_index > n))
              / nullif(count(*) filter (where parsed), 0), 4) as pass_rate
    from per_n
    group by model, judge, n
)

select * from final
order by n, pass_rate desc nulls last, model
