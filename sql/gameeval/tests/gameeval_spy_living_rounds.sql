-- A finished SpyFall game's spy took part in at least one round.
select cell_key, spy_living_rounds from {{ ref('gameeval_games') }}
where game = 'spyfall' and finished and (spy_living_rounds is null or spy_living_rounds < 1)
