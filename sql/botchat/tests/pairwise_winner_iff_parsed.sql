-- A pairwise verdict (Arena, GTEval) has a winner exactly when it was parsed: an unparseable verdict is never
-- a tie, and a parsed one always has a result.
with pairwise as (
    select * from {{ ref('arena_judgments') }}
    union all by name
    select * from {{ ref('gteval_judgments') }}
)

select cell_key, protocol, parsed, verdict, winner from pairwise
where ((winner is null) = parsed or (verdict is null) = parsed
       or winner not in ('model_a', 'model_b', 'tie') or position not in (1, 2))
