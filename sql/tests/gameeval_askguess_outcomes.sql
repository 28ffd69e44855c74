-- Every Ask-Guess game has one of the paper's five outcomes (ST, EE, RLE, AME, CE; a backend error is CE).
select cell_key, outcome from {{ ref('gameeval_games') }}
where game = 'askguess' and (outcome is null or outcome not in ('ST', 'EE', 'RLE', 'AME', 'CE'))
