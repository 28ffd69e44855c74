-- pairwise: who is really ahead on the current board, as its latest run that compared models left it (metric_pairs,
-- written with the run's metric snapshot; dialogbench/stats/compare.py). One row per (metric, slice, pair of models)
-- of every headline number with units (BotChat pass@N and GTEval, MT-Bench-101 task scores and average, GameEval's
-- rates and rounds): each model's number on the units both have (seeds, dialogues, words, word pairs, games), the
-- difference value_a - value_b, its 95% paired-bootstrap interval, the two-sided p of no difference, that p
-- Holm-adjusted over the pairs of the same (metric, slice), and the verdict: '<model> ahead' (adjusted p < 0.05 and
-- the interval excludes 0; for a lower-is-better metric such as Ask-Guess rounds, the lower), 'within noise',
-- 'cannot tell (...)' (too few shared units) or 'not measured (...)' (the judge failed its judge checks).
with pairs as (
    select * from {{ source('metric_pairs') }}
    where board is not distinct from (select board from {{ ref('current_board') }})
),

latest_run as (
    select arg_max(run_id, created_at) as run_id from pairs
),

final as (
    select pairs.* exclude (created_at)
    from pairs semi join latest_run using (run_id)
)

select * from final
order by family, leaderboard, metric, slice, model_a, model_b
