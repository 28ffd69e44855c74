-- report_length_boxes: the report's box plot of CL100K tokens per generated utterance, per model (min, quartiles,
-- max), read off botchat_lengths (each model's current config, each utterance once).
with lengths as (
    select * from {{ ref('botchat_lengths') }}
),

final as (
    select model, min_tokens as lo, q1_tokens as q1, median_tokens as median, q3_tokens as q3, max_tokens as hi
    from lengths
)

select * from final
