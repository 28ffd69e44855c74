-- Every Ask-Guess game has one of the paper's five outcomes (ST, EE, RLE, AME, CE), except a game that failed on
-- backend errors, which has none (a failed cell, replayed by the next run; older such rows said CE).
select cell_key, outcome from {{ ref('gameeval_games') }}
where game = 'askguess'
  and (case when end_reason = 'backend_error' then outcome is not null and outcome <> 'CE'
            else outcome is null or outcome not in ('ST', 'EE', 'RLE', 'AME', 'CE') end)
