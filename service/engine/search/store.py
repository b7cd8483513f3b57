"""The rows a search reads: a table's raw float32 rows, held once, and how they are read.

RowStore: a table's raw float32 rows with what every search step needs from them. The candidate
pass, the float64 rescoring and the analogy term sums all work from these arrays, so each of them
takes a RowStore rather than the search that owns it. There is one copy of the rows: the table's
own (memory-mapped for a prepared table). Every pass scores the raw rows and divides by their
norms; positions in a pass are row numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from service.engine.errors import DimensionMismatch, ZeroVector
from service.engine.tables.table import EmbeddingTable

# Bytes in a float32.
FLOAT32 = 4


@dataclass(frozen=True, eq=False)
class RowStore:
    """Raw rows, their float64 norms, and which rows have a direction.

    Zero rows (padding) have no direction: they are never candidates. `indexed` lists the rows
    with a norm, in row order.
    """

    table: EmbeddingTable
    norms64: np.ndarray
    indexed: np.ndarray
    zero: np.ndarray

    @classmethod
    def of(cls, table: EmbeddingTable) -> RowStore:
        """The store of `table`'s rows."""
        norms64 = table.norms64
        positive = norms64 > 0
        indexed = np.flatnonzero(positive).astype(np.int64)
        zero = np.flatnonzero(~positive).astype(np.int64)
        return cls(table, norms64, indexed, zero)

    @property
    def vectors(self) -> np.ndarray:
        """The raw float32 rows."""
        return self.table.vectors

    @property
    def width(self) -> int:
        """Components per row."""
        return self.table.width

    @property
    def rows(self) -> int:
        """Rows in the table."""
        return self.table.rows

    @property
    def nbytes(self) -> int:
        """Bytes held by the raw rows, their norms and the row lists."""
        return int(self.vectors.nbytes + self.norms64.nbytes + self.indexed.nbytes) + int(
            self.zero.nbytes
        )

    def check_vector(self, vector: np.ndarray) -> np.ndarray:
        """`vector` as a flat array of the table's width; DimensionMismatch otherwise."""
        vector = np.asarray(vector).reshape(-1)
        if vector.size != self.width:
            raise DimensionMismatch(self.width, vector.size)
        return vector

    def direction(self, vector: np.ndarray, what: str = "the query vector") -> np.ndarray:
        """`vector` scaled to unit length in float64; ZeroVector when it has no direction."""
        vector = self.check_vector(vector).astype(np.float64)
        norm = np.sqrt(np.sum(vector * vector))
        if not norm > 0:
            raise ZeroVector(what)
        return vector / norm

    def directions(self, rows: np.ndarray) -> np.ndarray:
        """Unit float64 directions of table rows; ZeroVector for a row with no direction."""
        rows = np.asarray(rows, dtype=np.int64)
        zero = self.norms64[rows] == 0
        if zero.any():
            row = int(rows[int(np.argmax(zero))])
            raise ZeroVector(f"row {row} ({self.table.tokens[row]!r})")
        return self.vectors[rows].astype(np.float64) / self.norms64[rows, None]

    def positions_of(self, rows: frozenset[int]) -> np.ndarray:
        """`rows` as a sorted array (the positions a pass masks)."""
        if not rows:
            return np.empty(0, dtype=np.int64)
        return np.sort(np.fromiter(rows, dtype=np.int64, count=len(rows)))

    def searchable(self, restrict: int | None) -> int:
        """How many rows a pass scans: the first `restrict` rows, or all."""
        return self.rows if restrict is None else min(restrict, self.rows)

    def directional(self, restrict: int | None) -> int:
        """How many rows with a direction lie within the first `restrict` rows."""
        if restrict is None:
            return int(self.indexed.size)
        return int(np.searchsorted(self.indexed, restrict))


def gather_rows(vectors: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Rows `ids` of `vectors` as a (len(ids), width) array, whatever the layout.

    Rows stored by columns are taken column by column (np.take on the transposed view): each
    column's reads then run forward through one contiguous column. On a 1M x 300 table, 240
    rows took 2.0 ms against 6.1 ms by plain fancy indexing, which walks row by row across
    every column.
    """
    if stored_by_columns(vectors):
        return np.take(vectors.T, ids, axis=1).T
    return vectors[ids]


def stored_by_columns(vectors: np.ndarray) -> bool:
    """Whether `vectors` are stored by columns (their transpose is C order)."""
    return bool(vectors.flags.f_contiguous and not vectors.flags.c_contiguous)
