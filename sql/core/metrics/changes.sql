-- changes: what changed since the previous run of the board. One row per metric series (family, leaderboard, metric,
-- model, slice) of the current board's latest run that recorded its metrics (current_board: a run reads its own; a
-- later run that recorded none, one that failed early, leaves the comparison as it was), against that series' value
-- of the most recent older run that recorded it on the same board (metric_history), runs ordered as board_runs orders
-- them (newest started_at first, as latest_runs): a run on another board (an ad-hoc run with CLI overrides) never
-- moves these series nor is compared with them.
--   status: 'new' (no earlier value), 'moved' (the value differs by more than 1e-9, or one side is null), 'same';
--     'within noise' when it differs but the night-over-night paired test (metric_changes: tonight - the previous
--     night on the units both have, dialogbench/history/noise.py) has a 95% interval that holds 0: what moved is
--     what a rerun of the same models would move by chance (change_ci_low / change_ci_high / change_p / shared say
--     so); a series without that test (Elo, or a previous run that kept no units) moves by the rule above;
--     'not measured' when either value was not measured (its judge's verdicts could not be read, or it tells nothing
--     apart: judge_health; such a value is never reported as a movement) and 'incomplete' when either rests on part
--     of its cells (some failed or are missing: the comparison would mix coverage with change); both with a null
--     delta, and `note` (the latest run's) says why.
--   delta: value - previous. outside_interval: the new value lies outside the previous run's 95% interval, or the
--     previous value outside the new one's (null when neither run has an interval, as for MT-Bench-101 scores and
--     GameEval rates, or when there is no earlier value).
--   cause: what differs between the two runs for this series, '; '-separated: 'model config' (the configs of the
--     row's models: weights, sampling, max_tokens, template, ...), 'judge config', 'prompts' (the family's prompts,
--     examples or parser versions), '<family> config' (its config section: limit, N, games, ...), 'cells a -> b' (the
--     number of cells the value rests on), then what the runs recorded of the judge and the engines (a series with an
--     earlier value):
--     'judge canary flagged: <stage> agreement a < t (k of n agreed)' when the latest run's judge canary
--       (canary_agreement) fell below its threshold for the row's judge on one of the family's judge stages (stage
--       '<family>' or '<family>_...': botchat_unieval, botchat_arena, botchat_gteval, mtbench101_judge; several
--       flagged stages are listed with ', '), and 'judge canary flagged in the previous run: ...' when the earlier
--       run's was: the judge then answered its repeated judgments otherwise than the first night. Only rows with a
--       judge (`judge` not null);
--     'engine <backend> v1 -> v2 (model)' (or 'engine <backend v1> -> <backend v2> (model)' when the backend differs
--       too) when the engines that wrote the row model's rows of this family differ between the two runs (run_engines:
--       its generations, answers or games), and '... (judge)' for the judge's verdicts and probes. Only where both
--       runs wrote such rows: a run that computed nothing for it (all cached) records no engine, and claims nothing.
--     Null when nothing recorded differs: a move with no cause is then the judge or an engine answering differently
--     without the canary falling below its threshold (canary_agreement has its share every run) or the recorded
--     engine changing (a run that computed nothing for the series records none), or cells recomputed after a
--     failure. config_changed: the run's whole effective config differs (run_configs has both).
with paired_changes as (
    select * from {{ ref('metric_changes') }}
),

canary as (
    select * from {{ ref('canary_agreement') }}
),

run_engines as (
    select * from {{ ref('run_engines') }}
),

board_runs as (
    select run_id, recency from {{ ref('board_runs') }}
),

history as (  -- the board's metric values, each with its run's recency (board_runs: 1 for the board's latest run)
    select metric_history.*, board_runs.recency
    from {{ ref('metric_history') }} metric_history
    join board_runs using (run_id)
    where metric_history.board is not distinct from (select board from {{ ref('current_board') }})
),

latest_run as (  -- the board's latest run that recorded metrics: a later run that recorded none blanks nothing
    select run_id from {{ ref('latest_metric_runs') }}
    where board is not distinct from (select board from {{ ref('current_board') }})
),

tonight as (
    select history.* from history semi join latest_run using (run_id)
),

earlier as (  -- each series' value of the most recent older run
    select history.*
    from history
    join tonight using (family, leaderboard, metric, model, slice)
    where history.recency > tonight.recency
    qualify row_number() over (
        partition by history.family, history.leaderboard, history.metric, history.model, history.slice
        order by history.recency, history.created_at desc
    ) = 1
),

families as (
    select distinct family from tonight
),

compared_runs as (  -- the runs the series are compared across: the latest and each series' earlier one
    select run_id from latest_run
    union
    select run_id from earlier
),

canary_flags as (  -- per run, judge and family: the judge canary's flagged stages of the family, in words
    select
        canary.run_id,
        canary.judge,
        families.family,
        string_agg(canary.stage || ' agreement ' || canary.agreement || ' < ' || canary.min_agreement || ' ('
            || canary.agree || ' of ' || canary.judgments || ' agreed)', ', ' order by canary.stage) as flagged
    from canary
    join families on canary.stage = families.family or starts_with(canary.stage, families.family || '_')
    where canary.flagged and canary.run_id in (select run_id from compared_runs)
    group by canary.run_id, canary.judge, families.family
),

engines as (  -- per run, model, side (the row's 'model' or its 'judge') and family: the engines of its rows
    select
        run_engines.run_id,
        run_engines.model,
        case when run_engines.role = 'judge' then 'judge' else 'model' end as side,
        families.family,
        string_agg(distinct run_engines.backend, '; ' order by run_engines.backend) as backends,
        string_agg(distinct run_engines.backend_version, '; ' order by run_engines.backend_version) as versions,
        string_agg(distinct concat_ws(' ', run_engines.backend, run_engines.backend_version), '; '
            order by concat_ws(' ', run_engines.backend, run_engines.backend_version)) as engines
    from run_engines
    join families
        on run_engines.protocol = families.family or starts_with(run_engines.protocol, families.family || '_')
    where run_engines.run_id in (select run_id from compared_runs)
    group by all
),

run_pairs as (  -- the (latest run, earlier run) pairs the series are compared across
    select distinct t.run_id, e.run_id as previous_run_id
    from tonight t join earlier e using (family, leaderboard, metric, model, slice)
),

engine_changes as (  -- per pair of runs, model, side and family with engines recorded in both: how they changed
    select
        pairs.run_id,
        pairs.previous_run_id,
        a.model,
        a.side,
        a.family,
        case
            when a.engines = b.engines then null
            when a.backends = b.backends and a.backends not like '%; %'
                then a.backends || ' ' || b.versions || ' -> ' || a.versions
            else b.engines || ' -> ' || a.engines
        end as change
    from run_pairs pairs
    join engines a on a.run_id = pairs.run_id
    join engines b
        on b.run_id = pairs.previous_run_id and b.model = a.model and b.side = a.side and b.family = a.family
),

compared as (
    select
        t.board,
        t.family,
        t.leaderboard,
        t.metric,
        t.model,
        t.slice,
        t.judge,
        e.run_id as previous_run_id,
        t.run_id,
        e.value as previous,
        t.value,
        t.value - e.value as delta,
        e.ci_low as previous_ci_low,
        e.ci_high as previous_ci_high,
        t.ci_low,
        t.ci_high,
        e.n as previous_n,
        t.n,
        e.measured is not false and t.measured is not false as measured,
        e.complete is not false and t.complete is not false as complete,
        t.note,
        e.model_fp <> t.model_fp as model_changed,
        e.judge_fp <> t.judge_fp as judge_changed,
        e.prompt_fp <> t.prompt_fp as prompts_changed,
        e.section_fp <> t.section_fp as section_changed,
        e.config_fp <> t.config_fp as config_changed,
        c.ci_low as change_ci_low,
        c.ci_high as change_ci_high,
        c.p as change_p,
        c.shared,
        c.shared_delta,
        flags.flagged as canary_flagged,
        previous_flags.flagged as previous_canary_flagged,
        model_engine.change as model_engine_change,
        judge_engine.change as judge_engine_change
    from tonight t
    left join earlier e using (family, leaderboard, metric, model, slice)
    left join paired_changes c
        on c.run_id = t.run_id and c.previous_run_id = e.run_id and c.family = t.family
        and c.leaderboard = t.leaderboard and c.metric = t.metric and c.model = t.model and c.slice = t.slice
    left join canary_flags flags
        on flags.run_id = t.run_id and flags.judge = t.judge and flags.family = t.family and e.run_id is not null
    left join canary_flags previous_flags
        on previous_flags.run_id = e.run_id and previous_flags.judge = t.judge and previous_flags.family = t.family
    left join engine_changes model_engine
        on model_engine.run_id = t.run_id and model_engine.previous_run_id = e.run_id and model_engine.model = t.model
        and model_engine.side = 'model' and model_engine.family = t.family
    left join engine_changes judge_engine
        on judge_engine.run_id = t.run_id and judge_engine.previous_run_id = e.run_id and judge_engine.model = t.judge
        and judge_engine.side = 'judge' and judge_engine.family = t.family
),

final as (
    select
        board,
        family,
        leaderboard,
        metric,
        model,
        slice,
        judge,
        previous_run_id,
        run_id,
        previous,
        value,
        case when measured and complete then delta end as delta,
        case
            when not measured then 'not measured'
            when not complete then 'incomplete'
            when previous_run_id is null then 'new'
            when previous is null and value is null then 'same'
            when previous is null or value is null then 'moved'
            when abs(delta) <= 1e-9 then 'same'
            when change_ci_low <= 0 and change_ci_high >= 0 and abs(shared_delta) > 1e-12 then 'within noise'
            else 'moved'
        end as status,
        case
            when delta is null or not measured or not complete or (ci_low is null and previous_ci_low is null) then null
            else coalesce(previous < ci_low or previous > ci_high, false)
                or coalesce(value < previous_ci_low or value > previous_ci_high, false)
        end as outside_interval,
        previous_ci_low,
        previous_ci_high,
        ci_low,
        ci_high,
        change_ci_low,
        change_ci_high,
        change_p,
        shared,
        previous_n,
        n,
        nullif(concat_ws('; ',
            case when model_changed then 'model config' end,
            case when judge_changed then 'judge config' end,
            case when prompts_changed then 'prompts' end,
            case when section_changed then family || ' config' end,
            case when previous_n is distinct from n and previous_run_id is not null
                then 'cells ' || coalesce(previous_n::varchar, '?') || ' -> ' || coalesce(n::varchar, '?') end,
            'judge canary flagged: ' || canary_flagged,
            'judge canary flagged in the previous run: ' || previous_canary_flagged,
            'engine ' || model_engine_change || ' (model)',
            'engine ' || judge_engine_change || ' (judge)'
        ), '') as cause,
        config_changed,
        note
    from compared
)

select * from final
order by family, leaderboard, metric, model, slice
