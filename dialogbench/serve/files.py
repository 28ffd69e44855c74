"""Which file, if any, a URL path names inside the reports folder. Everything else is refused (``None``): the server
must never read outside ``<lake>/reports``, whatever the path's encoding, dot segments, backslashes, NUL bytes or
symlinks say, and never serve a hidden or temporary file (the report writers' ``.report.html.*.tmp``) or a type it
does not know."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote

# The types served; anything else is a 404 (a .parquet or .duckdb copied there is not published by accident).
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}


def url_segments(url_path: str) -> list[str] | None:
    """The path's segments, percent-decoded, query and fragment left out; ``None`` for a path that tries to leave or
    hide: a ``..`` segment, a backslash, a NUL byte, bytes that are not UTF-8, a hidden (``.name``) or temporary
    (``*.tmp``) segment, or a request target that is not a path (``http://host/...``, ``*``). Empty and ``.``
    segments go, so ``//a/./b`` is ``a/b`` (relative to the reports folder, never absolute)."""
    if not url_path.startswith("/"):
        return None
    try:
        decoded = unquote(url_path.split("?", 1)[0].split("#", 1)[0], errors="strict")
    except UnicodeDecodeError:
        return None
    if "\\" in decoded or "\0" in decoded:
        return None
    segments = [s for s in decoded.split("/") if s not in ("", ".")]
    return None if any(not visible(s) for s in segments) else segments


def visible(name: str) -> bool:
    """A name the server may show: not ``..``, not hidden, not a temporary file."""
    return not name.startswith(".") and not name.endswith(".tmp")


def inside(root: Path, path: Path) -> Path | None:
    """``path`` with every symlink resolved, when it exists and stays inside ``root`` (resolved) by visible names;
    else ``None``. Symlinks within the folder are followed; one that leads out of it is refused."""
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError):  # missing, a symlink loop, a name too long
        return None
    if not resolved.is_relative_to(root):
        return None
    return resolved if all(visible(part) for part in resolved.relative_to(root).parts) else None


def listing(root: Path, folder: Path, *, folders: bool) -> dict[str, Path]:
    """The visible files (or, with ``folders``, folders) of ``folder``, itself resolved inside ``root``, by name, each
    where it really is: a symlink only when it resolves inside ``root``. One directory read; only a symlink costs a
    resolve, so the index of a lake with a thousand runs stays cheap."""
    found = {}
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if visible(entry.name) and (entry.is_dir() if folders else entry.is_file()):
                    path = inside(root, Path(entry.path)) if entry.is_symlink() else Path(entry.path)
                    if path is not None:
                        found[entry.name] = path
    except OSError:  # gone or unreadable meanwhile: nothing to list
        return {}
    return found


def servable(root: Path, url_path: str) -> tuple[Path, str] | None:
    """The regular file ``url_path`` names under ``root`` (the reports folder, resolved) and its content type, or
    ``None`` when it is refused or absent."""
    segments = url_segments(url_path)
    if not segments:
        return None
    path = inside(root, root.joinpath(*segments))
    if path is None or not path.is_file() or path.suffix.lower() not in TYPES:
        return None
    return path, TYPES[path.suffix.lower()]
