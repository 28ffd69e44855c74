-- generations: every row of the lake table, read from its Parquet files (source() is filled in by the catalog).
select * from {{ source('generations') }}
