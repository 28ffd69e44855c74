-- report_length_boxes: the report's box plot of CL100K tokens per generated utterance, per model (min, quartiles,
-- max), over the dialogues of each model's current config (its newest model fingerprint), each utterance once.
with lengths as (
    select * from {{ ref('utterance_lengths') }}
),

current_config as (
    select model, arg_max(model_fp, created_at) as model_fp from lengths group by model
),

utterances as (
    select distinct model, item_id, utterance, tokens
    from lengths semi join current_config using (model, model_fp)
),

final as (
    select
        model,
        min(tokens) as lo,
        quantile_cont(tokens, 0.25) as q1,
        quantile_cont(tokens, 0.5) as median,
        quantile_cont(tokens, 0.75) as q3,
        max(tokens) as hi
    from utterances
    group by model
)

select * from final
