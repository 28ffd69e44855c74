"""The Parquet lake: atomic partition writes, DuckDB reads, missing-cell anti-joins, the catalog."""

from dialogbench.lake.store import Lake

__all__ = ["Lake"]
