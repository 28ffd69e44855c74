"""A lake whose Delta tables are on an object store (``lake: s3://bucket/prefix``), and the local folder that works
beside it.

The tables (every row the pipeline computes) live on the store: each write is a Delta commit there, made by any
machine that has the credentials, with no lock or lease needed to store a cell once (``lake.delta.store``). What is
not a table stays on the machine that runs: the lake's marker, its lease (it only spares two runs of one machine
computing the same cells), the writers' checkpoints (``_state``), the reports and the catalog. That folder, the
*mirror*, is ``<DIALOGBENCH_LAKE_CACHE or ~/.cache/dialogbench/lakes>/<bucket>/<prefix>``, and its marker names the
store (``"store": "s3://…"``), so every command given the folder, or the same ``s3://`` URI, reads the same tables.

Readers read local files: before a table is read, the data files of its latest version that the mirror lacks (or
holds with another size) are fetched into ``<mirror>/<table>/``, each under a temp name then renamed. A Delta data
file never changes once written (a new version names new files), so a fetched file stays right; ``vacuum`` on the
store makes the mirror's old files unreferenced, and ``dialogbench vacuum`` deletes them from the mirror too. The SQL
views, the pinned query path, the catalog for plain DuckDB and ``verify`` then work on the mirror as on a local lake
(``verify`` checks the local copies; a damaged copy is moved aside and fetched again on the next read)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

CACHE_VARIABLE = "DIALOGBENCH_LAKE_CACHE"
CHUNK = 8 << 20


def is_store_uri(text: str | os.PathLike | None) -> bool:
    return isinstance(text, str) and text.lower().startswith(("s3://", "s3a://"))


def mirror_folder(uri: str, *, environ=None) -> Path:
    """The local folder of the lake whose tables are at ``uri`` (see the module)."""
    from dialogbench.lake.delta.location import Location
    from dialogbench.lake.names import safe_name

    location = Location.parse(uri)
    environ = os.environ if environ is None else environ
    base = Path(environ.get(CACHE_VARIABLE) or Path.home() / ".cache" / "dialogbench" / "lakes")
    return base / safe_name(location.bucket or "") / "/".join(safe_name(p) for p in location.prefix.split("/") if p)


def fetch(store, table: str, relative: str, local: Path, size: int) -> None:
    """Copy the data file ``relative`` of ``table`` from ``store`` (a ``DeltaCellStore`` on an object store) to
    ``local``, unless ``local`` holds ``size`` bytes already. Written under a temp name, then renamed: a reader never
    opens half a file, and a killed fetch leaves only a temp file the next fetch replaces."""
    try:
        if local.stat().st_size == size:
            return
    except FileNotFoundError:
        pass
    from deltalake.fs import DeltaStorageHandler

    local.parent.mkdir(parents=True, exist_ok=True)
    tmp = local.with_name(f".{local.name}.{uuid.uuid4().hex[:8]}.fetch")
    handler = DeltaStorageHandler(store.location.table_uri(table), store.options.as_dict())
    try:
        with handler.open_input_file(relative) as source, open(tmp, "wb") as out:
            while chunk := source.read(CHUNK):
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, local)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise

