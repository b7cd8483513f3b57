"""A served table written in gensim's own KeyedVectors format, without gensim.

gensim's `KeyedVectors.save(path)` pickles the object and puts large arrays in files beside
it; `KeyedVectors.load(path)` reads both. This writes what that load expects: `path`, a pickle
of a gensim KeyedVectors (its class named by import, since the client never imports gensim)
holding the keys, key_to_index, the metadata columns as gensim's `expandos` and a lifecycle
event that says where the rows came from, and `path.vectors.npy`, the float32 rows, filled a
page at a time so the table is never held whole.

A writer refuses to replace what it did not write: an existing `path` is replaced only when
its first bytes carry WRITTEN_BY (this writer's mark, the first lifecycle event), and an
existing `path.vectors.npy` only with it. Both are written under hidden names beside their
targets and renamed into place once complete.
"""

from __future__ import annotations

import copyreg
import importlib
import os
import pickle
import platform
import sys
import tempfile
from collections.abc import Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from embedding_service.models.answers import Metadata

GENSIM_MODULE = "gensim.models.keyedvectors"
# This writer's mark, within the first MARK_BYTES of every file it writes.
WRITTEN_BY = "embedding_service RemoteKeyedVectors.save"
MARK_BYTES = 1024
# gensim's pickle protocol (gensim.utils.PICKLE_PROTOCOL).
PICKLE_PROTOCOL = 4


@dataclass(frozen=True)
class Page:
    """Rows `start` onwards of a table: their keys, float32 rows and metadata."""

    start: int
    keys: list[str]
    rows: np.ndarray
    metadata: list[Metadata]


class RefusedOverwrite(FileExistsError):
    """The path to save to holds a file this writer did not write; nothing was written."""


def vectors_path(path: Path) -> Path:
    """Where gensim's load finds the rows of `path` (gensim.utils.SaveLoad's subname)."""
    return Path(f"{path}.vectors.npy")


def check_target(path: Path) -> None:
    """Refuse `path` (and its rows file) unless missing or written by this writer."""
    if path.suffix in (".gz", ".bz2"):
        raise ValueError(f"{path}: a compressed save is not written here; give a plain path")
    rows = vectors_path(path)
    for target in (path, rows):
        if target.is_symlink() or (target.exists() and not target.is_file()):
            raise RefusedOverwrite(f"{target}: exists and is not a plain file; nothing written")
    if path.exists() and not written_here(path):
        raise RefusedOverwrite(
            f"{path}: exists and was not written by {WRITTEN_BY}; nothing written"
        )
    if rows.exists() and not path.exists():
        raise RefusedOverwrite(
            f"{rows}: exists and was not written by {WRITTEN_BY}; nothing written"
        )


def written_here(path: Path) -> bool:
    """Whether `path` is a file this writer wrote (its mark near the start)."""
    with path.open("rb") as handle:
        return WRITTEN_BY.encode() in handle.read(MARK_BYTES)


def write_keyed_vectors(
    path: Path, shape: tuple[int, int], pages: Iterable[Page], source: str
) -> None:
    """Write the table of `shape` whose rows `pages` gives, in order, as gensim saves one."""
    check_target(path)
    staged_rows, staged_pickle = _staging(path), _staging(path)
    try:
        keys, metadata = _write_rows(staged_rows, shape, pages)
        state = _state(path, shape[1], keys, metadata, source)
        with staged_pickle.open("wb") as handle:
            _GensimPickler(handle, PICKLE_PROTOCOL).dump(_KeyedVectors(state))
        os.replace(staged_rows, vectors_path(path))
        os.replace(staged_pickle, path)
    finally:
        for staged in (staged_rows, staged_pickle):
            with suppress(FileNotFoundError):
                staged.unlink()


def _staging(path: Path) -> Path:
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    os.close(handle)
    return Path(name)


def _write_rows(
    staged: Path, shape: tuple[int, int], pages: Iterable[Page]
) -> tuple[list[str], list[Metadata]]:
    """Fill a float32 .npy of `shape` with the pages' rows; their keys and metadata."""
    rows = np.lib.format.open_memmap(staged, mode="w+", dtype=np.float32, shape=shape)
    keys: list[str] = []
    metadata: list[Metadata] = []
    for page in pages:
        rows[page.start : page.start + len(page.keys)] = page.rows
        keys += page.keys
        metadata += page.metadata
    if len(keys) != shape[0]:
        raise RuntimeError(f"the server gave {len(keys)} rows of the table's {shape[0]}")
    rows.flush()
    del rows
    return keys, metadata


def _state(
    path: Path, width: int, keys: list[str], metadata: list[Metadata], source: str
) -> dict[str, Any]:
    """A gensim 4 KeyedVectors' attributes, as its save leaves them (rows set aside)."""
    event = {
        "written_by": WRITTEN_BY,  # first of the first event: within the file's first bytes
        "event": "saving",
        "fname_or_handle": str(path),
        "source": source,
        "datetime": datetime.now().isoformat(),
        "python": sys.version,
        "platform": platform.platform(),
    }
    return {
        "lifecycle_events": [event],
        "vector_size": width,
        "index_to_key": keys,
        "next_index": len(keys),
        "key_to_index": {key: index for index, key in enumerate(keys)},
        "norms": None,
        "expandos": expandos(metadata),
        "mapfile_path": None,
        "__numpys": ["vectors"],
        "__scipys": [],
        "__ignoreds": [],
        "__recursive_saveloads": [],
    }


def expandos(metadata: Sequence[Metadata]) -> dict[str, np.ndarray]:
    """Metadata columns as gensim keeps per-key attributes: an array a column."""
    names = dict.fromkeys(name for row in metadata for name in row)
    return {name: gensim_column([row.get(name) for row in metadata]) for name in names}


def gensim_column(values: list[Any]) -> np.ndarray:
    """A column as gensim's set_vecattr types it: int64, float64, else Python objects."""
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return np.array(values, dtype=np.int64)
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return np.array(values, dtype=np.float64)
    column = np.empty(len(values), dtype=object)
    column[:] = values
    return column


def gensim_value(value: Any) -> Any:
    """One metadata value as gensim's get_vecattr returns it from such a column."""
    return gensim_column([value])[0]


class _KeyedVectors:
    """Stands for gensim's KeyedVectors in the pickle: its state, under gensim's class."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.state = state


class _Module:
    """Stands for gensim's module in the pickle: imported by name when it is loaded."""


class _GensimPickler(pickle.Pickler):
    """Pickles a _KeyedVectors as gensim's KeyedVectors: the class as
    getattr(importlib.import_module(GENSIM_MODULE), "KeyedVectors"), then its state."""

    def reducer_override(self, obj: Any) -> Any:
        if obj is _Module:
            return importlib.import_module, (GENSIM_MODULE,)
        if obj is _KeyedVectors:
            return getattr, (_Module, "KeyedVectors")
        if isinstance(obj, _KeyedVectors):
            return copyreg.__newobj__, (_KeyedVectors,), obj.state  # type: ignore[attr-defined]
        return NotImplemented
