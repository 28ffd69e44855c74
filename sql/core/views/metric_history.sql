-- metric_history: every metric value every run recorded (metric_snapshots: one row per metric of each leaderboard
-- row, written once a run's stages are done), with the fingerprints a change is traced to (model_fp, judge_fp,
-- prompt_fp, section_fp, config_fp). One series is (board, family, leaderboard, metric, model, slice): `board` the
-- board the run published to, `leaderboard` the view the value was read from; its rows over run_id / created_at are
-- its history. measured: false when the value was not measured (its judge's verdicts could not be read, or it
-- tells nothing apart: see judge_health); complete: false when the value rests on part of its cells (some failed or
-- are missing). Both are null in snapshots written before they were recorded. Snapshots written before boards
-- existed held the leaderboard in `board` and no `leaderboard`: such a row's board is its run's (run_boards). The
-- effective config of a run is in run_configs.
with snapshots as (
    select * from {{ source('metric_snapshots') }}
),

run_boards as (
    select run_id, board from {{ ref('run_boards') }}
),

final as (
    select
        snapshots.* exclude (board, leaderboard),
        case when snapshots.leaderboard is null then run_boards.board else snapshots.board end as board,
        coalesce(snapshots.leaderboard, snapshots.board) as leaderboard
    from snapshots left join run_boards using (run_id)
)

select * from final
