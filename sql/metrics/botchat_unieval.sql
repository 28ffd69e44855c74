-- botchat_unieval: UniEval pass@N per model, judge and N (BotChat README: a dialogue passes at N when the
-- judge finds no AI, or its first AI utterance comes after the N-th). The cells counted are those of each
-- (model, judge)'s most recent plan; pass@N is read off one judgment of the first n_judged utterances for
-- every 3 <= N <= n_judged. Unparseable verdicts are counted, and left out of pass_rate's denominator.
with unieval as (
    select * from {{ ref('botchat_unieval_current') }}
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
