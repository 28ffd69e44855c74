-- report_pairwise: the report's "Who is really ahead" matrices, from `pairwise` (the current board's latest run's
-- paired comparisons). Each pair in both orientations, one row per (family, leaderboard, metric, slice, row_model,
-- col_model), so a matrix cell (row A, column B) reads its own row:
--   difference: row - column on the units both have (value_a - value_b of `pairwise`, negated for the mirror
--     cell), ci_low / ci_high its 95% paired-bootstrap interval (mirrored likewise; null without one); row_value /
--     col_value each model's number on those units; p, p_holm, shared, verdict as in `pairwise`.
--   mark: 'ahead' (the verdict names the row model: it is better, the higher or, for a lower-is-better metric such
--     as Ask-Guess rounds, the lower), 'behind' (it names the column model), 'within noise', 'cannot tell' (too few
--     shared units: no test), 'not measured' (the judge failed its judge checks); reason: the verdict's parenthesis
--     ('3 shared units, fewer than 5', the judge check's finding), null for the others.
--   judge, slice_n: the slice's judge and N (`judge=...`, `n=...` in slice; null when the slice has none); rest: the
--     slice without its N; largest_n: true for the slice with the largest N of its (family, leaderboard, metric, rest),
--     and for every slice without N; ns: how many N the metric has there (the report shows the largest and says so).
--   model_value: the row model's number on the metric as the same run recorded it (metric_history), else the mean
--     of its row_value; model_rank: 1 for the best of its slice by model_value (the higher, or the lower where lower is
--     better), then the name: the matrix's order of rows and columns.
with pairwise as (
    select * from {{ ref('pairwise') }}
),

history as (
    select run_id, family, leaderboard, metric, slice, model, value from {{ ref('metric_history') }}
),

both_ways as (
    select
        run_id, family, leaderboard, metric, slice,
        model_a as row_model, model_b as col_model, value_a as row_value, value_b as col_value,
        difference, ci_low, ci_high, p, p_holm, shared, verdict, higher_is_better
    from pairwise
    union all
    select
        run_id, family, leaderboard, metric, slice,
        model_b as row_model, model_a as col_model, value_b as row_value, value_a as col_value,
        -difference as difference, -ci_high as ci_low, -ci_low as ci_high, p, p_holm, shared, verdict,
        higher_is_better
    from pairwise
),

keyed as (
    select
        both_ways.*,
        nullif(regexp_extract(slice, '(^|, )judge=([^,]*)', 2), '') as judge,
        try_cast(nullif(regexp_extract(slice, '(^|, )n=([0-9]+)(,|$)', 2), '') as integer) as slice_n,
        trim(regexp_replace(slice, '(^|, )n=[0-9]+(,|$)', '\2'), ', ') as rest,
        case
            when verdict = row_model || ' ahead' then 'ahead'
            when verdict = col_model || ' ahead' then 'behind'
            when verdict = 'within noise' then 'within noise'
            when verdict like 'not measured%' then 'not measured'
            else 'cannot tell'
        end as mark,
        nullif(regexp_extract(verdict, '^[^(]*\((.*)\)$', 1), '') as reason
    from both_ways
),

with_n as (
    select
        keyed.*,
        slice_n is null or slice_n = max(slice_n) over (partition by family, leaderboard, metric, rest) as largest_n,
        count(distinct slice_n) over (partition by family, leaderboard, metric, rest) as ns
    from keyed
),

valued as (
    select
        with_n.*,
        coalesce(
            history.value,
            avg(with_n.row_value) over (partition by with_n.family, with_n.leaderboard, with_n.metric, with_n.slice,
                                                     with_n.row_model)
        ) as model_value
    from with_n
    left join history
        on history.run_id = with_n.run_id
        and history.family = with_n.family
        and history.leaderboard = with_n.leaderboard
        and history.metric = with_n.metric
        and history.slice = with_n.slice
        and history.model = with_n.row_model
),

final as (
    select
        run_id, family, leaderboard, metric, slice, judge, slice_n, rest, largest_n, ns,
        row_model, col_model, row_value, col_value, difference, ci_low, ci_high, p, p_holm, shared,
        verdict, mark, reason, higher_is_better, model_value,
        dense_rank() over (
            partition by family, leaderboard, metric, slice
            order by (case when higher_is_better then -model_value else model_value end) nulls last, row_model
        ) as model_rank
    from valued
)

select * from final
order by family, leaderboard, metric, slice, model_rank, col_model
