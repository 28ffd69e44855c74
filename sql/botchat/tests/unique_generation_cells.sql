-- Every generation cell is stored once (a rerun or a resumed run never duplicates it).
select cell_key, count(*) as copies from {{ ref('generations') }} group by cell_key having count(*) > 1
