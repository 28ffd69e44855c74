-- Every judgment cell is stored once.
select cell_key, count(*) as copies from {{ ref('judgments') }} group by cell_key having count(*) > 1
