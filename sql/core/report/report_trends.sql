-- report_trends: the report's "Trends", each headline number over the current board's runs (metric_history). One row
-- per value a run recorded on the board, (run, family, leaderboard, metric, slice, model), with:
--   run_index: the run's place among the board's runs that recorded metrics, 0 for the first, by created_at (then
--     run_id); run_at: when it recorded them; runs: how many such runs the board has.
--   value, ci_low / ci_high (its 95% interval, null without one), measured, complete, note as metric_history has
--     them; cells: its `n` (the cells the value rests on); gap: true when the value is not there to draw (null, or
--     not measured: its judge failed a judge check): the chart breaks its line there.
--   judge, slice_n: the slice's judge (the row's) and N (`n=...` in slice; null when it has none); rest: the slice
--     without its N; largest_n: true for the slice with the largest N of its (family, leaderboard, metric, rest) on the
--     board, and for every slice without N; ns: how many N it has there; slices: how many slices (rest) the
--     (family, leaderboard, metric, judge) has (a task per MT-Bench-101 task score, a villager per SpyFall spy);
--     series_runs: how many of the board's runs recorded the (family, leaderboard, metric, slice).
with history as (
    select * from {{ ref('metric_history') }}
    where board is not distinct from (select board from {{ ref('current_board') }})
),

board_runs as (
    select run_id, min(created_at) as run_at from history group by run_id
),

numbered as (
    select
        run_id,
        run_at,
        row_number() over (order by run_at, run_id) - 1 as run_index,
        count(*) over () as runs
    from board_runs
),

keyed as (
    select
        history.* exclude (n),
        history.n as cells,
        numbered.run_index,
        numbered.run_at,
        numbered.runs,
        try_cast(nullif(regexp_extract(history.slice, '(^|, )n=([0-9]+)(,|$)', 2), '') as integer) as slice_n,
        trim(regexp_replace(history.slice, '(^|, )n=[0-9]+(,|$)', '\2'), ', ') as rest
    from history join numbered using (run_id)
),

final as (
    select
        run_id, run_at, run_index, runs, family, leaderboard, metric, slice, judge, slice_n, rest,
        slice_n is null or slice_n = max(slice_n) over (partition by family, leaderboard, metric, rest) as largest_n,
        count(distinct slice_n) over (partition by family, leaderboard, metric, rest) as ns,
        count(distinct rest) over (partition by family, leaderboard, metric, judge) as slices,
        count(distinct run_id) over (partition by family, leaderboard, metric, slice) as series_runs,
        model, value, ci_low, ci_high, cells, measured, complete, note,
        value is null or measured is not distinct from false as gap
    from keyed
)

select * from final
order by family, leaderboard, metric, slice, model, run_index
