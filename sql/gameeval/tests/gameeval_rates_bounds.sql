-- SpyFall win rates lie in 0..1 and never count more wins than finished games; TofuKingdom camps never win more
-- games than they played.
select 'spyfall' as metric, spy_model as model, spy_win_rate as value from {{ ref('gameeval_spyfall') }}
where spy_wins > games or spy_win_rate < 0 or spy_win_rate > 1
union all
select 'spyfall_pairs', spy_model, spy_win_rate from {{ ref('gameeval_spyfall_pairs') }}
where spy_wins > games or spy_win_rate < 0 or spy_win_rate > 1
union all
select 'tofukingdom', model, points from {{ ref('gameeval_tofukingdom') }} where points > games
union all
select 'tofukingdom_permutations', prince_model, games from {{ ref('gameeval_tofukingdom_permutations') }}
where prince_wins + queen_wins + spy_wins <> games
