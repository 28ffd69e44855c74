-- A SpyFall / TofuKingdom game has a winner exactly when it finished by the rules, and the winner is a side of its
-- game (SpyFall: spy / villagers; TofuKingdom: the prince, queen or spy camp). The one other outcome is SpyFall's
-- 'discarded' (the most-voted name was no living player), which never finished.
select cell_key, game, finished, outcome from {{ ref('gameeval_games') }}
where game in ('spyfall', 'tofukingdom')
  and (finished is null
       or (game = 'spyfall'
           and not coalesce((finished and outcome in ('spy', 'villagers'))
                            or (not finished and (outcome is null or outcome = 'discarded')), false))
       or (game = 'tofukingdom' and ((outcome is null) = finished or outcome not in ('prince', 'queen', 'spy'))))
