"""Which approximate index a loaded table gets, and the background work that follows.

At load (inside the registry's load, so a bad file fails it): a saved index is read, memory-
mapped and checked against the table (the spec's index_path, else the prepared folder's
index.faiss when it is of the kind asked for); the parameters are resolved against the
table's size. After the table is swapped in: its recall is measured, or its index is built on
a thread of its own while it serves exactly, then saved (index_path, else the prepared folder).
A build never holds up this table, another table's load, or a reload.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path

from service import metrics
from service.config import TableSpec
from service.engine.errors import EngineError, TableLoadError
from service.engine.files.reading import unreadable
from service.engine.indexes.building import Indexing
from service.engine.indexes.files import load_index, save_index, sidecar_of
from service.engine.search.approximate import APPROXIMATE, IndexKind
from service.engine.search.cosine import CosineSearch
from service.engine.served import ServedTable
from service.engine.tables.prepared import INDEX as PREPARED_INDEX
from service.engine.tables.prepared import fingerprint, is_prepared
from service.engine.threads import limit_openmp

LOGGER = logging.getLogger("service.loading.indexes")


def attach_for(spec: TableSpec) -> Callable[[CosineSearch], Indexing]:
    """What the registry calls on a freshly indexed table: its Indexing, a saved index
    attached when there is one."""

    def attach(search: CosineSearch) -> Indexing:
        table = search.table
        saved = saved_index(spec, search)
        kind = spec.index or (saved_kind(saved) if saved is not None else None) or "exact"
        if saved is not None and spec.index_path is None and saved_kind(saved) != kind:
            saved = None  # the prepared folder holds another kind: build the one asked for
        where = spec.index_path or spec.path or spec.checkpoints
        parameters = spec.index_parameters(kind).resolved(table.rows, table.width, where)
        indexing = Indexing(search, parameters)
        indexing.on_ready = lambda ready: metrics.record_index(spec.name, ready)
        if saved is not None and (kind in APPROXIMATE or spec.index is None):
            approximate, truth = load_index(
                saved, parameters, fingerprint(table), table.rows, table.width
            )
            indexing.attach(approximate, truth, str(saved))
        return indexing

    return attach


def saved_index(spec: TableSpec, search: CosineSearch) -> Path | None:
    """The index file to read: index_path when it exists, else a prepared folder's own."""
    if spec.index_path is not None:
        return spec.index_path if spec.index_path.exists() else None
    folder = Path(search.table.source)
    if is_prepared(folder) and (folder / PREPARED_INDEX).is_file():
        return folder / PREPARED_INDEX
    return None


def saved_kind(path: Path) -> IndexKind | None:
    """The kind a saved index's sidecar names (None without a valid one; TableLoadError when
    it may not be read: serving exactly would hide the index asked for)."""
    try:
        facts = json.loads(sidecar_of(path).read_text(encoding="utf-8"))
        kind = facts["parameters"]["kind"]
    except PermissionError:
        raise unreadable(sidecar_of(path)) from None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return kind if kind in APPROXIMATE else None


def save_target(spec: TableSpec, served: ServedTable) -> Path | None:
    """Where a built index is saved: index_path, else the table's prepared folder."""
    if spec.index_path is not None:
        return spec.index_path
    folder = Path(served.table.source)
    return folder / PREPARED_INDEX if is_prepared(folder) else None


def start_index_work(
    served: ServedTable, spec: TableSpec, threads: int = 1
) -> threading.Thread | None:
    """Measure an attached index, or build a missing one, on a background thread that uses
    at most `threads` OpenMP threads (compute_threads: serving keeps the other cores)."""
    indexing = served.indexing
    if indexing.state not in ("measuring", "pending"):
        metrics.record_index(served.name, indexing)
        return None
    target = save_target(spec, served) if indexing.state == "pending" else None
    thread = threading.Thread(
        target=index_table,
        args=(served, target, threads),
        name=f"index-{served.name}",
        daemon=True,
    )
    thread.start()
    return thread


def index_table(served: ServedTable, target: Path | None, threads: int = 1) -> None:
    """Build (and save) or measure a table's index; a failure is logged and reported."""
    limit_openmp(threads)
    indexing = served.indexing
    try:
        if indexing.state == "pending":
            LOGGER.info("building the %s index of table %r", indexing.parameters.kind, served.name)
            metrics.record_index(served.name, indexing)
            indexing.build()
            if target is not None:
                save_built(served, target)
        else:
            indexing.measure()
    except (EngineError, RuntimeError, MemoryError) as error:
        message = error.message if isinstance(error, EngineError) else str(error)
        LOGGER.error("the index of table %r failed, serving exactly: %s", served.name, message)
        indexing.fail(message)
    metrics.record_index(served.name, indexing)
    if indexing.recall is not None:
        LOGGER.info(
            "table %r: %s index ready, recall@10 %.3f",
            served.name,
            indexing.parameters.kind,
            indexing.recall.at_k,
        )


def save_built(served: ServedTable, target: Path) -> None:
    """Save a freshly built index beside its table; a failure to write is only logged."""
    indexing = served.indexing
    approximate, truth, recall = indexing.approximate, indexing.truth, indexing.recall
    assert approximate is not None and truth is not None and recall is not None
    try:
        save_index(target, approximate, fingerprint(served.table), truth, recall)
    except TableLoadError as error:
        LOGGER.warning("table %r: the built index is not saved: %s", served.name, error.message)
        return
    indexing.source = f"built, saved to {target}"
