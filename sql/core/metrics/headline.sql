-- headline: every headline number of the board as its latest run recorded it (metric_history, of the run
-- latest_metric_runs names), the numbers the report refuses refused here too: `value`, `ci_low` and `ci_high` are null
-- when the value is not measured (its judge failed a judge check: `note` says which) and kept as `raw_value`,
-- `raw_ci_low`, `raw_ci_high`. The interval is the cluster bootstrap's for every number with units (dialogbench/stats;
-- docs/error-bars.md), the view's own for the others (Elo's spread, Bradley-Terry's bootstrap); null with too few
-- units. `complete`: false when the value rests on part of its cells. `rank`: the value's rank among the measured
-- values of its (leaderboard, metric, slice), 1 the best (a tie shares the better rank); `rank_low` - `rank_high`: the
-- ranks its interval allows (Chatbot Arena's rule: best 1 + the models whose interval lies wholly above, worst the
-- count - those wholly below; 1 - count without an interval); null when not measured, and in runs recorded before ranks
-- were. This is the view to pass on: `dialogbench export "select * from headline" --out numbers.csv`.
with history as (
    select * from {{ ref('metric_history') }}
    where board is not distinct from (select board from {{ ref('current_board') }})
),

latest_run as (  -- the board's latest run that recorded metrics
    select run_id from {{ ref('latest_metric_runs') }}
    where board is not distinct from (select board from {{ ref('current_board') }})
),

final as (
    select
        board,
        run_id,
        created_at,
        family,
        leaderboard,
        metric,
        model,
        slice,
        judge,
        case when measured is not false then value end as value,
        case when measured is not false then ci_low end as ci_low,
        case when measured is not false then ci_high end as ci_high,
        n,
        rank,
        rank_low,
        rank_high,
        measured is not false as measured,
        complete is not false as complete,
        note,
        value as raw_value,
        ci_low as raw_ci_low,
        ci_high as raw_ci_high
    from history semi join latest_run using (run_id)
)

select * from final
order by family, leaderboard, metric, slice, value desc nulls last, model
