-- report_pairwise_tally: the report's "Who is really ahead" for a metric with many slices (MT-Bench-101's task scores,
-- SpyFall's spy per villager): each ordered pair of models once per (family, leaderboard, metric, judge) of
-- report_pairwise (the board's latest run's comparisons, each slice at its largest N), counting the slices by verdict:
--   slices: the slices both were compared in; ahead / behind: those where the row model / the column model is ahead
--     (adjusted p < 0.05 and the interval excluding 0, as in `pairwise`); within_noise, cannot_tell, not_measured: the
--     rest by verdict. ahead_in / behind_in: those slices, ', '-separated (each without its judge: 'task=CM').
--   slice_key: what tells the slices apart ('task', 'villager_model'); parts: how many slices the metric has.
--   net: the row model's slices ahead minus behind, over every column; model_rank: 1 for the highest net, then the
--     name: the matrix's order of rows and columns.
with pairs as (
    select
        *,
        trim(regexp_replace(rest, '(^|, )judge=[^,]*', ''), ', ') as part
    from {{ ref('report_pairwise') }}
    where largest_n
),

counted as (
    select *, count(distinct part) over (partition by family, leaderboard, metric, judge) as parts
    from pairs
),

grouped as (
    select
        run_id,
        family,
        leaderboard,
        metric,
        judge,
        row_model,
        col_model,
        bool_and(higher_is_better) as higher_is_better,
        any_value(parts) as parts,
        any_value(regexp_extract(part, '^([^=]*)=', 1)) as slice_key,
        count(*) as slices,
        count(*) filter (where mark = 'ahead') as ahead,
        count(*) filter (where mark = 'behind') as behind,
        count(*) filter (where mark = 'within noise') as within_noise,
        count(*) filter (where mark = 'cannot tell') as cannot_tell,
        count(*) filter (where mark = 'not measured') as not_measured,
        string_agg(part, ', ' order by part) filter (where mark = 'ahead') as ahead_in,
        string_agg(part, ', ' order by part) filter (where mark = 'behind') as behind_in
    from counted
    group by run_id, family, leaderboard, metric, judge, row_model, col_model
),

netted as (
    select
        *,
        sum(ahead - behind) over (partition by family, leaderboard, metric, judge, row_model) as net
    from grouped
),

final as (
    select
        *,
        dense_rank() over (partition by family, leaderboard, metric, judge order by net desc, row_model) as model_rank
    from netted
)

select * from final
order by family, leaderboard, metric, judge, model_rank, col_model
