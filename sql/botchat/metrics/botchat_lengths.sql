-- botchat_lengths: CL100K tokens per generated utterance, per model (the paper's Table 1 and Figure 3),
-- over the dialogues of each model's current config (its newest model fingerprint): mean, median, p95, max, and
-- the rest of a box plot (min, quartiles).
with lengths as (
    select * from {{ ref('utterance_lengths') }}
),

current_config as (
    select model, arg_max(model_fp, created_at) as model_fp from lengths group by model
),

utterances as (
    -- a dialogue extended to a larger N keeps its prefix: count each utterance once
    select distinct model, model_fp, item_id, utterance, tokens
    from lengths semi join current_config using (model, model_fp)
),

final as (
    select
        model,
        count(*) as utterances,
        count(distinct item_id) as dialogues,
        round(avg(tokens), 1) as mean_tokens,
        quantile_cont(tokens, 0.5) as median_tokens,
        quantile_cont(tokens, 0.95) as p95_tokens,
        max(tokens) as max_tokens,
        min(tokens) as min_tokens,
        quantile_cont(tokens, 0.25) as q1_tokens,
        quantile_cont(tokens, 0.75) as q3_tokens
    from utterances
    group by model
)

select * from final
order by mean_tokens
