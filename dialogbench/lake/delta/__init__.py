"""The lake on an existing table format: Delta Lake, through delta-rs (the ``deltalake`` package).

Why a table format. Today's lake (``dialogbench.lake``) builds a table format by hand: each Parquet file is committed
by a temp file, a checksummed record beside it and two renames; a single-writer lease (``flock`` on ``.lease``) keeps
two runs from computing the same cell; dispatched units commit under attempt tokens and record locks; a reader lists
the folders and checks each file against its record. All of it needs a POSIX file system with working locks and
atomic renames, one writer at a time, and it has no notion of a version to read. Delta Lake gives the same guarantees
as properties of the format, on a folder or on an object store:

- **atomic multi-file commits**: a write's files become visible together, when its entry in the transaction log
  (``_delta_log/<version>.json``) is created, or not at all; a killed writer leaves no partial table;
- **optimistic concurrency with conflict detection**: writers do not lock; each commit checks what was committed
  since it read, and a MERGE that would miss a concurrent writer's rows fails and runs again (``store.py``), so
  "each cell once" holds with any number of writers;
- **snapshot reads by version**: every commit is a numbered, immutable version; a reader pins one per table and
  reads it whole, whatever is written meanwhile (and the catalog's DuckDB views can read exactly its files);
- **object stores without rename or locks**: a commit is one conditional put (``If-None-Match: *``), which S3 and
  S3-compatible stores honour (``location.py``), so the lake can live in a bucket that several boxes write;
- **compaction and vacuum**: many small files (a chunk's cells each) are rewritten into few without changing any
  version's rows, and files no kept version needs are deleted.

What it would replace, once wired in (the plan; nothing in the pipeline uses this package yet): the lease's job of
preventing duplicate cells (``insert_missing`` on the cell key does it; the lease may stay only to keep two runs from
wasting compute on the same cells), the attempt tokens and their record locks (a dead attempt's commit either
happened or did not, and a late one inserts nothing already there), the per-file sidecar records and the roll-forward
of half-renamed files (the log lists each version's files with their sizes), and the folder listing with its
health check (a version's file list comes from the log; a byte-level sha256 like ``verify``'s would need a record
of its own, in the commit's metadata). ``verify``/quarantine of
damaged bytes, the read-only query path and the catalog's views stay; the views would read a snapshot's files.

Modules: ``location`` (a folder or ``s3://…``, and the storage options from the environment), ``keys`` (a cell key
and its MERGE condition), ``store`` (``DeltaCellStore``), ``migrate`` (a folder lake into a store), ``errors``.
See ``docs/lake-format.md``."""

from dialogbench.lake.delta.errors import CommitConflict, DeltaStoreError, MissingSetting, RefusedSetting, TableNotFound
from dialogbench.lake.delta.location import Location, StorageOptions
from dialogbench.lake.delta.store import DeltaCellStore

__all__ = ["CommitConflict", "DeltaCellStore", "DeltaStoreError", "Location", "MissingSetting", "RefusedSetting",
           "StorageOptions", "TableNotFound"]
