-- run_engines: which engine served each model in each run, from the rows the run wrote: one row per (run, model,
-- role, protocol, backend, backend_version) with `rows`, how many of the run's rows record it. `backend` is the
-- config's backend, `backend_version` the engine's version as the rows record it (vLLM / transformers version, with
-- its GPUs; an endpoint's served model id and system_fingerprint); a row whose replies came from several engines
-- ("a; b") counts once for each. Read from: BotChat generations (role 'chatbot', protocol 'botchat'), MT-Bench-101
-- answers ('chatbot', 'mtbench101'), GameEval games ('player', 'gameeval_<game>': a game records its players' engines
-- together, so it counts for a player only when one model played every seat or one engine served them all), every
-- judge verdict (`judgments`: role 'judge', `model` the judge, its protocol) and known-answer probe (judge_probes:
-- 'judge', the protocol probed). A run that wrote nothing for a model (its cells all cached) has no row for it, and
-- rows that record no engine version (files written before backend_version existed, an engine that names none) are
-- left out: no record is no claim. `changes` reads it for its 'engine a -> b' cause.
with generations as (
    select * from {{ ref('generations') }}
),

answers as (
    select * from {{ ref('mtbench101_answers') }}
),

games as (  -- every row, replayed games' first attempts included: the run's engines played them too
    select * from {{ source('gameeval_games') }}
),

judgments as (
    select * from {{ ref('judgments') }}
),

probes as (
    select * from {{ source('judge_probes') }}
),

seated as (  -- each game with its players' distinct models
    select run_id, game, backend, backend_version, list_distinct(map_values(assignment)) as players
    from games
),

written as (
    select run_id, model, 'chatbot' as role, protocol, backend, backend_version from generations
    union all
    select run_id, model, 'chatbot' as role, 'mtbench101' as protocol, backend, backend_version from answers
    union all
    select run_id, unnest(players) as model, 'player' as role, 'gameeval_' || game as protocol, backend,
        backend_version
    from seated
    where len(players) = 1 or (backend_version not like '%; %' and coalesce(backend, '') not like '%; %')
    union all
    select run_id, judge as model, 'judge' as role, protocol, backend, backend_version from judgments
    union all
    select run_id, judge as model, 'judge' as role, protocol, backend, backend_version from probes
),

engines as (
    select run_id, model, role, protocol, backend, unnest(string_split(backend_version, '; ')) as backend_version
    from written
    where backend_version is not null and model is not null
),

final as (
    select run_id, model, role, protocol, backend, backend_version, count(*) as rows
    from engines
    where backend_version <> ''
    group by run_id, model, role, protocol, backend, backend_version
)

select * from final
order by run_id, model, role, protocol, backend, backend_version
