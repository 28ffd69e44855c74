-- elo: arena ratings computed by each run (Python: bootstrap Elo and Bradley–Terry), per judge, N and model.
select * from {{ source('elo') }}
