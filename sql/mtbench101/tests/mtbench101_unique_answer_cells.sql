-- Every MT-Bench-101 answer cell is stored once (a rerun never answers a turn again).
select cell_key, count(*) as copies from {{ ref('mtbench101_answers') }} group by cell_key having count(*) > 1
