-- A dialogue that kept its prompt tokens has one per generated utterance, as completion_tokens does.
select cell_key, len(prompt_tokens) as prompt_counts, len(completion_tokens) as completion_counts
from {{ ref('generations') }}
where prompt_tokens is not null and len(prompt_tokens) <> len(completion_tokens)
