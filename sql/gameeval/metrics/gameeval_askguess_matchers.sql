-- gameeval_askguess_matchers: one row per current played Ask-Guess game (gameeval_current): how each of the two
-- matchers (gameeval.askguess.matcher, dialogbench/gameeval/askguess.py) would end the same transcript.
--   authors     the GameEval authors' code (jordddan/GameEval game_askguess.py): 'gameover' or 'game over' in the
--               lower-cased answer (L98); a correct guess when the word (underscores as spaces) occurs anywhere in
--               the lower-cased last question (L99, a substring); a mentioned word when ' word ' occurs in the
--               lower-cased reply with every character that is neither a word character nor whitespace made a
--               space (checkin, L14-25).
--   whole_word  dialogbench's earlier rule: the label as a whole word (underscores as spaces or hyphens, plural
--               s/es allowed, any case) for the guess and the mention; 'game over' also as 'game-over', 'Game  Over'.
-- Each matcher is replayed over the transcript's descriptions and answers in order, as the host checks them
-- (gameover -> ST / EE, then a mention -> AME); <matcher>_event is the first event it would end the game at and
-- <matcher>_outcome that outcome. Where it ends nothing, the game went on under it: its outcome is the stored one
-- when that was no matcher's (RLE, CE), else null (it would have gone on past the transcript, outcome unknown).
-- differ: the two matchers end the game at another event or with another outcome (the report counts them).
-- SQL regular expressions are RE2's (\w, \s and \b ASCII only, Python's are Unicode): the same on English replies.
with games as (
    select cell_key, assignment['questioner'] as model, setting, item, outcome
    from {{ ref('gameeval_current') }}
    where game = 'askguess' and played
),

events as (
    select cell_key, event, kind, valid, text
    from {{ ref('gameeval_transcripts') }}
    where game = 'askguess'
),

replies as (  -- each description and answer, with the last question asked before it
    select
        e.cell_key,
        e.event,
        e.kind,
        e.text,
        g.item,
        last_value(case when e.kind = 'ask' and e.valid then e.text end ignore nulls) over (
            partition by e.cell_key order by e.event rows between unbounded preceding and current row
        ) as question
    from events e join games g using (cell_key)
),

checked as (
    select
        cell_key,
        event,
        kind = 'answer' and (contains(lower(text), 'gameover') or contains(lower(text), 'game over')) as a_over,
        contains(lower(coalesce(question, '')), lower(replace(item, '_', ' '))) as a_guess,
        contains(regexp_replace(lower(text), '[^\w\s]', ' ', 'g'), ' ' || lower(replace(item, '_', ' ')) || ' ')
            as a_mention,
        kind = 'answer' and regexp_matches(text, '(?i)game\s*[-_]?\s*over') as w_over,
        '(?i)\b' || regexp_replace(regexp_replace(trim(item), '([.^$*+?()\[\]|\\])', '\\\1', 'g'),
                                   '[\s_-]+', '[\\s_-]+', 'g') || '(?:e?s)?\b' as w_pattern,
        question,
        text
    from replies
    where kind in ('describe', 'answer') and text is not null
),

ends as (
    select
        cell_key,
        event,
        case when a_over then (case when a_guess then 'ST' else 'EE' end) when a_mention then 'AME' end as a_end,
        case
            when w_over then (case when regexp_matches(coalesce(question, ''), w_pattern) then 'ST' else 'EE' end)
            when regexp_matches(text, w_pattern) then 'AME'
        end as w_end
    from checked
),

firsts as (
    select
        cell_key,
        min(event) filter (where a_end is not null) as authors_event,
        arg_min(a_end, event) filter (where a_end is not null) as a_end,
        min(event) filter (where w_end is not null) as whole_word_event,
        arg_min(w_end, event) filter (where w_end is not null) as w_end
    from ends
    group by cell_key
),

final as (
    select
        g.cell_key,
        g.model,
        g.setting,
        g.item,
        g.outcome,
        f.authors_event,
        coalesce(f.a_end, case when g.outcome in ('RLE', 'CE') then g.outcome end) as authors_outcome,
        f.whole_word_event,
        coalesce(f.w_end, case when g.outcome in ('RLE', 'CE') then g.outcome end) as whole_word_outcome,
        (f.authors_event is distinct from f.whole_word_event or f.a_end is distinct from f.w_end) as differ
    from games g left join firsts f using (cell_key)
)

select * from final
