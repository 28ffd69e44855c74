"""What is on the store under a table, seen without delta-rs: the folder itself, or the bucket through boto3 (S3's
own client). Not through ``deltalake.fs`` wrapped in a pyarrow file system: pyarrow calling that Python file system
from its threads can make the process abort at exit (``store.DeltaCellStore.read`` says more)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.parquet as pq

from dialogbench.lake.delta import DeltaCellStore


def _client(store: DeltaCellStore):
    import boto3

    options = store.options
    return boto3.client("s3", endpoint_url=options["AWS_ENDPOINT_URL"], region_name=options["AWS_REGION"],
                        aws_access_key_id=options["AWS_ACCESS_KEY_ID"],
                        aws_secret_access_key=options["AWS_SECRET_ACCESS_KEY"])


def parquet_files(store: DeltaCellStore, table: str) -> set[str]:
    """Every Parquet file under the table, referenced by a version or not, as ``files`` names them (an absolute path
    or an ``s3://`` URI)."""
    root = store.location.table_uri(table)
    if store.location.kind == "local":
        return {str(p) for p in Path(root).rglob("*.parquet")}
    bucket, prefix = store.location.bucket, urlsplit(root).path.lstrip("/") + "/"
    found = set()
    for page in _client(store).get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        found |= {f"s3://{bucket}/{o['Key']}" for o in page.get("Contents", []) if o["Key"].endswith(".parquet")}
    return found


def parquet_rows(store: DeltaCellStore, files: list[str] | set[str]) -> int:
    """The rows the files hold by their Parquet footers, read one by one (not through delta-rs)."""
    if store.location.kind == "local":
        return sum(pq.read_metadata(f).num_rows for f in files)
    client, total = _client(store), 0
    for uri in files:
        parts = urlsplit(uri)
        body = client.get_object(Bucket=parts.netloc, Key=parts.path.lstrip("/"))["Body"].read()
        total += pq.read_metadata(pa.BufferReader(body)).num_rows
    return total
