-- A SpyFall / TofuKingdom game has a winner exactly when it finished by the rules, and the winner is a side of its
-- game (SpyFall: spy / villagers; TofuKingdom: the prince, queen or spy camp).
select cell_key, game, finished, outcome from {{ ref('gameeval_games') }}
where game in ('spyfall', 'tofukingdom')
  and (finished is null
       or (outcome is null) = finished
       or (game = 'spyfall' and outcome not in ('spy', 'villagers'))
       or (game = 'tofukingdom' and outcome not in ('prince', 'queen', 'spy')))
