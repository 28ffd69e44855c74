-- A game that kept its moves' token counts has one entry per transcript entry in each list, and they add up to the
-- game's prompt_tokens / completion_tokens (a reply whose tokens were put on no entry, or on the wrong game, fails).
select cell_key, prompt_tokens, completion_tokens, len(transcript) as entries
from {{ ref('gameeval_games') }}
where move_prompt_tokens is not null
  and (len(move_prompt_tokens) <> len(transcript)
       or len(move_completion_tokens) is distinct from len(transcript)
       or coalesce(list_sum(move_prompt_tokens), 0) <> prompt_tokens
       or coalesce(list_sum(move_completion_tokens), 0) is distinct from completion_tokens)
