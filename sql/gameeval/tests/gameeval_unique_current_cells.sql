-- Every planned GameEval cell appears once in gameeval_current (its latest game, or once as missing).
select cell_key, count(*) as copies from {{ ref('gameeval_current') }} group by cell_key having count(*) > 1
