-- Each run has one place in its board's order (board_runs), and each board one latest run (latest_runs) and one latest
-- run that recorded metrics (latest_metric_runs): "which run is latest" has a single answer.
select 'run ' || run_id as what, count(*) as copies from {{ ref('board_runs') }} group by run_id having count(*) > 1
union all
select 'latest run of ' || coalesce(board, '(no board)'), count(*) from {{ ref('latest_runs') }}
group by board having count(*) > 1
union all
select 'latest run with metrics of ' || coalesce(board, '(no board)'), count(*) from {{ ref('latest_metric_runs') }}
group by board having count(*) > 1
