-- botchat_truncation: generated utterances cut at the model's max_tokens, per model, over the dialogues of each
-- model's current config (its newest model fingerprint, as botchat_lengths). The backends keep no finish reason, so
-- an utterance counts as cut when its completion tokens (the model's own tokenizer, generations.completion_tokens)
-- reach the max_tokens recorded with its dialogue (generations.max_tokens). Each utterance is counted once: a
-- dialogue extended to a larger N keeps its prefix, so only its longest generation is read. Dialogues written
-- before max_tokens was recorded have none: their utterances are counted in unknown_cap, never as cut.
with generations as (
    select * from {{ ref('generations') }}
),

current_config as (
    select model, arg_max(model_fp, created_at) as model_fp from generations group by model
),

dialogues as (
    select model, dialogue_key, max_tokens, completion_tokens
    from generations semi join current_config using (model, model_fp)
    qualify row_number() over (partition by dialogue_key order by n_target desc, created_at desc, cell_key) = 1
),

utterances as (
    select model, max_tokens, unnest(completion_tokens) as tokens from dialogues
),

final as (
    select
        model,
        max(max_tokens) as max_tokens,
        count(*) as utterances,
        count(*) filter (where max_tokens is not null and tokens >= max_tokens) as capped,
        count(*) filter (where max_tokens is null) as unknown_cap,
        round(count(*) filter (where max_tokens is not null and tokens >= max_tokens)
              / nullif(count(*) filter (where max_tokens is not null), 0), 4) as capped_rate
    from utterances
    group by model
)

select * from final
order by model
