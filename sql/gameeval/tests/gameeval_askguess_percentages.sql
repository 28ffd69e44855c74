-- The five Ask-Guess outcome percentages of each (model, setting) with a played trial sum to 100.
select model, setting, st + ee + rle + ame + ce as total from {{ ref('gameeval_askguess') }}
where trials > 0 and (st + ee + rle + ame + ce is null or abs(st + ee + rle + ame + ce - 100) > 1e-6)
