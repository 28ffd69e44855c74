-- mtbench101_answers: every MT-Bench-101 model answer (one per judged turn, model config and context mode),
-- read from its Parquet files (source() is filled in by the catalog). `turn` is 0-based, as in the dataset.
select * from {{ source('mtbench101_answers') }}
