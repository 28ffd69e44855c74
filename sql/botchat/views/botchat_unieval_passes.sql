-- botchat_unieval_passes: every current UniEval verdict (botchat_unieval_current) at every N it answers for,
-- 3 <= N <= n_judged: does the dialogue pass at N? parsed_pass: a parsed verdict finds no AI, or its first AI
-- utterance comes after the N-th. unparsed_pass: the authors' rule for a reply the parser cannot read (BotChat
-- annotations/BrowseAnnotation.ipynb, parse_output / calc_acc read only its `Index:` line): it passes at N unless
-- its raw output holds an `Index: <k>` with k <= N. botchat_unieval_pass_rates counts these per N (botchat_unieval)
-- and at the human dialogue's length (botchat_unieval_gt).
with unieval as (
    select
        *,
        case when not parsed then try_cast(regexp_extract(raw_output, 'Index:\s*([0-9]+)', 1) as bigint) end
            as authors_index
    from {{ ref('botchat_unieval_current') }}
),

per_n as (
    select model, judge, item_id, parsed, choice, ai_index, authors_index, unnest(generate_series(3, n_judged)) as n
    from unieval
),

final as (
    select
        model,
        judge,
        item_id,
        n::integer as n,
        parsed,
        parsed and (choice = 'No' or ai_index > n) as parsed_pass,
        not parsed and (authors_index is null or authors_index > n) as unparsed_pass
    from per_n
)

select * from final
