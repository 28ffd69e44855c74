-- stored_usage: what the models spent on the results the lake keeps, one row per (model, role, protocol): calls (backend requests whose result the lake
-- keeps), prompt_tokens and completion_tokens (sums of the backend's counts over those calls; null when none of
-- them has one) and calls_without_counts (calls whose prompt or completion count is unknown: rows written before the
-- lake kept it; whatever count they do have is in the sums). Every stored call counts once, whatever plan it was for:
--   role 'chatbot': BotChat generations (protocol 'botchat'; a call per generated utterance, read from each
--     dialogue's longest row, since a dialogue extended to a larger N keeps its prefix; prompt tokens are null in
--     rows written before generations.prompt_tokens) and MT-Bench-101 answers (protocol 'mtbench101', a call each);
--   role 'judge': every verdict of every judge (`judgments`; protocol as stored: botchat_unieval, botchat_arena,
--     botchat_gteval, mtbench101_judge, …), a call each;
--   role 'player': every GameEval move (protocol 'gameeval_<game>'; a call per transcript entry of a player, a failed
--     move included) of every game row stored, so a game that ended in a backend error and was replayed counts both
--     times (gameeval_games keeps only the newest row); counts per move are null in rows written before
--     gameeval_games.move_prompt_tokens / move_completion_tokens.
-- A failed generation, answer or verdict is not stored, so it is not counted.
with generations as (
    select * from {{ ref('generations') }}
),

judgments as (
    select * from {{ ref('judgments') }}
),

answers as (
    select * from {{ ref('mtbench101_answers') }}
),

games as (  -- every row, not gameeval_games' newest per cell: a replayed game's first attempt spent its tokens too
    select * from {{ source('gameeval_games') }}
),

dialogues as (  -- each dialogue's longest row holds every utterance generated for it
    select model, protocol, completion_tokens, prompt_tokens
    from generations
    qualify row_number() over (partition by dialogue_key order by n_target desc, created_at desc, cell_key) = 1
),

utterances as (  -- the two lists are aligned; a null prompt_tokens list unnests as nulls beside its utterances
    select model, protocol, unnest(completion_tokens) as completion_tokens, unnest(prompt_tokens) as prompt_tokens
    from dialogues
),

entries as (  -- move_*_tokens are aligned with the transcript; null lists (older rows) unnest as nulls
    select
        'gameeval_' || game as protocol,
        unnest(transcript) as e,
        unnest(move_prompt_tokens) as prompt_tokens,
        unnest(move_completion_tokens) as completion_tokens
    from games
),

calls as (
    select model, 'chatbot' as role, protocol, prompt_tokens, completion_tokens from utterances
    union all
    select model, 'chatbot' as role, 'mtbench101' as protocol, prompt_tokens, completion_tokens from answers
    union all
    select judge as model, 'judge' as role, protocol, prompt_tokens, completion_tokens from judgments
    union all
    select e.model, 'player' as role, protocol, prompt_tokens, completion_tokens from entries where e.model is not null
),

final as (
    select
        model,
        role,
        protocol,
        count(*) as calls,
        sum(prompt_tokens)::bigint as prompt_tokens,
        sum(completion_tokens)::bigint as completion_tokens,
        count(*) filter (where prompt_tokens is null or completion_tokens is null) as calls_without_counts
    from calls
    group by model, role, protocol
)

select * from final
order by model, role, protocol
