"""Checkpoint sets: several versions of one table's rows, with one vocabulary.

A training run's snapshots, or any versions of a table whose row i is the same token in every
version. The last checkpoint is the table itself (held and indexed like any table); the earlier
ones are float32 matrices memory-mapped from private copies made at load
(loaders/checkpoints.py), so only the pages a request reads come into memory. A plain table is
a set of one checkpoint.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from service.engine.errors import UnknownCheckpoint
from service.engine.tables.table import EmbeddingTable

# Rows converted to float64 at a time by the passes over whole checkpoints (12.6 MB at 384 wide).
CHUNK_ROWS = 4096


@dataclass(frozen=True, eq=False)
class Checkpoints:
    """The versions before a table's last one: a label and a file name each, and their rows."""

    labels: tuple[str, ...]  # one per checkpoint, the last (the table itself) included
    sources: tuple[str, ...]  # file names, no directories
    earlier: tuple[np.ndarray, ...]  # float32 rows of every checkpoint but the last


class Versions:
    """A table's checkpoints as one sequence: checkpoint i's label, file and rows."""

    def __init__(self, table: EmbeddingTable, name: str) -> None:
        self.table = table
        self.name = name
        own = table.checkpoints
        self.labels = own.labels if own else ("table",)
        self.sources = own.sources if own else (_file_name(table.source),)
        self._earlier = own.earlier if own else ()

    @property
    def count(self) -> int:
        """How many checkpoints (1 for a plain table)."""
        return len(self.labels)

    @property
    def last(self) -> int:
        """The served checkpoint's index."""
        return self.count - 1

    def check(self, checkpoint: int) -> int:
        """`checkpoint`, if the set has it; UnknownCheckpoint otherwise."""
        if not 0 <= checkpoint < self.count:
            raise UnknownCheckpoint(checkpoint, self.count, self.name)
        return checkpoint

    def vectors(self, checkpoint: int) -> np.ndarray:
        """The float32 rows of one checkpoint (mapped, except the last)."""
        self.check(checkpoint)
        return self.table.vectors if checkpoint == self.last else self._earlier[checkpoint]

    def rows(self, checkpoint: int, rows: np.ndarray) -> np.ndarray:
        """Some rows of one checkpoint, as float64 (only their pages are read)."""
        return self.vectors(checkpoint)[rows].astype(np.float64)

    def describe(self, checkpoint: int) -> dict[str, int | str]:
        """{"index", "label", "source"} of one checkpoint."""
        return {
            "index": checkpoint,
            "label": self.labels[checkpoint],
            "source": self.sources[checkpoint],
        }


def chunks(vectors: np.ndarray, rows: np.ndarray | None = None) -> Iterator[np.ndarray]:
    """float64 copies of `vectors` (or of its `rows`), CHUNK_ROWS rows at a time."""
    count = len(vectors) if rows is None else rows.size
    for start in range(0, count, CHUNK_ROWS):
        stop = min(start + CHUNK_ROWS, count)
        part = vectors[start:stop] if rows is None else vectors[rows[start:stop]]
        yield np.asarray(part, dtype=np.float64)


def _file_name(source: str) -> str:
    return source.rstrip("/").rsplit("/", 1)[-1]
