-- judge_probe_history: a judge's known-answer probes run by run, one row per (board, run_id, judge, judge_fp,
-- protocol, protocol_version, kind) of every run that asked probes (its plans of the judge_probe:* stages, cached
-- cells included): that run's probes / correct / accuracy with its Wilson 95% interval (ci_low / ci_high), graded as
-- judge_probes grades them (a cell, or a pair of cells for pair-graded kinds), and the evidence pooled over the series
-- so far: pooled_probes / pooled_correct / pooled_accuracy / pooled_ci_low / pooled_ci_high over the distinct items
-- this run or an earlier one of the same board asked the same judge config (judge_fp) under the same protocol
-- version. With judge_checks.rotate each night asks new items, so the pooled interval narrows night after night; a
-- changed judge (or prompt) starts a new series; an item asked again counts once. run_at: when the run planned them.
with planned as (
    select distinct board, run_id, created_at, cell_key
    from {{ ref('plans') }}
    where stage like 'judge\_probe:%' escape '\'
),

runs as (
    select board, run_id, min(created_at) as run_at from planned group by board, run_id
),

probes as (
    select * exclude (run_id, created_at)
    from {{ source('judge_probes') }}
    qualify row_number() over (partition by cell_key order by created_at desc) = 1
),

asked as (
    select runs.board, runs.run_id, runs.run_at, probes.*
    from planned
    join runs using (board, run_id)
    join probes using (cell_key)
),

graded as (  -- one row per graded item a run asked
    select board, run_id, run_at, judge, judge_fp, protocol, protocol_version, kind, probe_id as item,
        coalesce(correct, false) as correct
    from asked
    where pair_id is null
    union all
    select board, run_id, run_at, judge, judge_fp, protocol, protocol_version, kind, pair_id as item,
        coalesce(max(score) filter (where expected = 'higher') > max(score) filter (where expected = 'lower'), false)
            as correct
    from asked
    where pair_id is not null
    group by board, run_id, run_at, judge, judge_fp, protocol, protocol_version, kind, pair_id
),

nightly as (
    select
        board,
        run_id,
        run_at,
        judge,
        judge_fp,
        protocol,
        protocol_version,
        kind,
        count(*) as probes,
        count(*) filter (where correct) as correct,
        count(*) filter (where correct) / count(*) as accuracy,
        wilson_low(count(*) filter (where correct), count(*)) as ci_low,
        wilson_high(count(*) filter (where correct), count(*)) as ci_high
    from graded
    group by board, run_id, run_at, judge, judge_fp, protocol, protocol_version, kind
),

so_far as (  -- each run's series and the distinct items its runs up to this one asked (an item's latest grade)
    select nightly.board, nightly.run_id, nightly.judge, nightly.judge_fp, nightly.protocol, nightly.protocol_version,
        nightly.kind, earlier.item, arg_max(earlier.correct, earlier.run_at) as correct
    from nightly
    join graded as earlier
        on earlier.board is not distinct from nightly.board
        and earlier.judge = nightly.judge
        and earlier.judge_fp = nightly.judge_fp
        and earlier.protocol = nightly.protocol
        and earlier.protocol_version = nightly.protocol_version
        and earlier.kind = nightly.kind
        and earlier.run_at <= nightly.run_at
    group by all
),

pooled as (
    select
        board,
        run_id,
        judge,
        judge_fp,
        protocol,
        protocol_version,
        kind,
        count(*) as pooled_probes,
        count(*) filter (where correct) as pooled_correct,
        count(*) filter (where correct) / count(*) as pooled_accuracy,
        wilson_low(count(*) filter (where correct), count(*)) as pooled_ci_low,
        wilson_high(count(*) filter (where correct), count(*)) as pooled_ci_high
    from so_far
    group by board, run_id, judge, judge_fp, protocol, protocol_version, kind
),

final as (
    select nightly.*, pooled.* exclude (board, run_id, judge, judge_fp, protocol, protocol_version, kind)
    from nightly
    join pooled
        on pooled.board is not distinct from nightly.board
        and pooled.run_id = nightly.run_id
        and pooled.judge = nightly.judge
        and pooled.judge_fp = nightly.judge_fp
        and pooled.protocol = nightly.protocol
        and pooled.protocol_version = nightly.protocol_version
        and pooled.kind = nightly.kind
)

select * from final
order by board, judge, protocol, kind, run_at
