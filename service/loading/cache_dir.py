"""The cache directory: each table kept in prepared form, keyed by its source and options.

The first load of a spec reads the source, writes the prepared folder and opens that folder,
memory-mapped (so even the first load serves from the page cache, shared with every worker);
later loads open the folder directly. The key covers each source file's path, size and
modification time and every option that changes what is read, so an edited source gets a new
folder (old ones are left for the operator to delete).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from service.config import TableSpec
from service.engine.errors import TableLoadError
from service.engine.files.reading import confined
from service.engine.tables.prepared import VERSION, is_prepared, open_prepared, write_prepared
from service.engine.tables.table import EmbeddingTable

# Spec fields that change what a load reads (not how it is served or indexed); the layout
# changes what is written, and is in the key too (entry_of).
SOURCE_FIELDS = ("format", "tensor", "width", "limit", "unicode_errors")
SOURCE_FILES = ("path", "vocab", "labels", "counts")


def check_writable(folder: Path) -> None:
    """Create `folder` if needed; TableLoadError naming it unless a file can be written in it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".probe-"):
            pass
    except OSError as error:
        raise TableLoadError(
            folder, f"cache directory is not writable ({error.strerror or error})"
        ) from None


def entry_of(spec: TableSpec, cache_dir: Path) -> Path:
    """The folder a spec's prepared form lives in."""
    described: dict[str, object] = {name: getattr(spec, name) for name in SOURCE_FIELDS}
    # A folder written in an older prepared format is another entry (written again on use).
    described["prepared_version"] = VERSION
    if spec.layout == "rows":  # named only when not the default: older entries keep their key
        described["layout"] = "rows"
    for name in SOURCE_FILES:
        path = getattr(spec, name)
        described[name] = None if path is None else _file_facts(path)
    digest = hashlib.sha256(json.dumps(described, sort_keys=True, default=str).encode())
    return cache_dir / f"{spec.name}-{digest.hexdigest()[:16]}"


def _file_facts(path: Path) -> list[object]:
    """Resolved path, size and modification time (of a directory: of its entries too)."""
    resolved = path.resolve()
    try:
        status = resolved.stat()
    except OSError:
        return [str(resolved)]  # the load itself reports a missing file
    facts: list[object] = [str(resolved), status.st_size, status.st_mtime_ns]
    if resolved.is_dir():
        for child in sorted(resolved.iterdir()):
            with_status = child.stat()
            facts.append([child.name, with_status.st_size, with_status.st_mtime_ns])
    return facts


def cached_table(
    spec: TableSpec, cache_dir: Path, read_source: Callable[[], EmbeddingTable]
) -> EmbeddingTable:
    """The spec's table from its prepared folder in `cache_dir`, written first if missing."""
    entry = entry_of(spec, cache_dir)
    if not is_prepared(entry):
        check_writable(cache_dir)
        source = read_source()  # confined to admin_tables_dir for tables added through admin
        with confined(None):
            facts = {"spec": spec.model_dump(mode="json")}
            # The layout the source holds: the spec's, or its loader's (static models: rows).
            write_prepared(source, entry, facts, spec.layout or source.layout)
        del source
    with confined(None):  # the cache is the service's own folder, not a caller's file
        table = open_prepared(entry)
    with suppress(OSError):
        os.utime(entry)  # last used: what an operator clearing old folders goes by
    return table
