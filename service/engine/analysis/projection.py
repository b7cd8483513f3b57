"""PCA of a table's directions: the Embedding Projector's picture, computed with numpy alone.

Rows are L2-normalised and centred (the Projector's "spherize"), and the basis is the leading
eigenvectors of the width x width covariance of a seeded sample of at most `sample_limit`
rows, accumulated in float64 chunk by chunk: never a float64 copy of the table, and a table of
millions of rows is fitted from its sample, not from every row.

Zero rows (padding) have no direction: they are left out of the fit and of the "first",
"random" and "words" selections (words.py), and naming one (as a token to place, or a raw
zero vector) is ZeroVector.

An eigenvector is defined only up to its sign, so each component is flipped to make its
largest-magnitude coordinate positive: the same table always gives the same picture.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from service.engine.analysis.words import first_words
from service.engine.errors import DimensionMismatch, InvalidQuery, ZeroVector
from service.engine.search.store import RowStore
from service.engine.tables.pieces import PLAIN
from service.engine.tables.table import EmbeddingTable

# The fit's sample is drawn with this seed, so a table gives one picture per load.
FIT_SEED = 0
DEFAULT_SAMPLE_ROWS = 50_000
MAX_DIMS = 3
# Rows converted to float64 at a time: 4096 x 384 x 8 bytes is 12.6 MB.
CHUNK_ROWS = 4096

Selection = Literal["first", "random"]


@dataclass(frozen=True)
class Basis:
    """A fitted PCA: the sample's mean direction, its leading components and their shares."""

    mean: np.ndarray
    components: np.ndarray
    explained_variance_ratio: np.ndarray
    sample_rows: int
    fit_seconds: float

    @property
    def dims(self) -> int:
        """How many components were fitted (3, or the width when it is smaller)."""
        return int(self.components.shape[0])

    def project(self, directions: np.ndarray, dims: int) -> np.ndarray:
        """Coordinates of unit float64 `directions` (n x width) on the first `dims` components.

        Each coordinate is summed on its own (einsum, not a BLAS product whose blocking depends
        on how many rows there are), so a row lands on the same spot in every request.
        """
        return np.einsum("ij,kj->ik", directions - self.mean, self.components[:dims])


def fit_sample(rows: np.ndarray, limit: int, seed: int = FIT_SEED) -> np.ndarray:
    """The rows a fit uses: all of `rows` when they fit in `limit`, else a seeded sample, sorted."""
    if rows.size <= limit:
        return rows
    chosen = np.random.default_rng(seed).choice(rows.size, size=limit, replace=False)
    return rows[np.sort(chosen)]


def fit_basis(vectors: np.ndarray, norms: np.ndarray, rows: np.ndarray) -> Basis:
    """PCA of the directions of `rows` (norms > 0), in two float64 passes over them."""
    started = time.perf_counter()
    count, width = int(rows.size), int(vectors.shape[1])
    if count < 2:
        raise InvalidQuery(f"PCA needs at least 2 rows with a direction, not {count}")
    mean = np.zeros(width)
    for chunk in unit_chunks(vectors, norms, rows):
        mean += chunk.sum(axis=0)
    mean /= count
    covariance = np.zeros((width, width))
    for chunk in unit_chunks(vectors, norms, rows):
        centred = chunk - mean
        covariance += centred.T @ centred
    covariance /= count - 1
    components, ratios = leading_components(covariance, min(MAX_DIMS, width))
    return Basis(mean, components, ratios, count, time.perf_counter() - started)


def fit_selection(vectors: np.ndarray, norms: np.ndarray, rows: np.ndarray) -> Basis:
    """PCA of exactly the directions of `rows` (norms > 0), as the Projector refits isolated
    points: fit_basis, or for fewer rows than the width the SVD of the centred rows (the same
    components, in rows^2 x width flops rather than rows x width^2 + width^3)."""
    count, width = int(rows.size), int(vectors.shape[1])
    if count >= width or count < 2:
        return fit_basis(vectors, norms, rows)
    started = time.perf_counter()
    units = vectors[rows].astype(np.float64) / norms[rows, None]
    mean = units.mean(axis=0)
    centred = units - mean
    _, singular, right = np.linalg.svd(centred, full_matrices=False)
    dims = min(MAX_DIMS, count)
    total = float(np.sum(centred * centred))
    ratios = singular[:dims] ** 2 / total if total > 0 else np.zeros(dims)
    components = np.ascontiguousarray(fix_signs(right[:dims]))
    elapsed = time.perf_counter() - started
    return Basis(mean, components, np.clip(ratios, 0.0, 1.0), count, elapsed)


def unit_chunks(vectors: np.ndarray, norms: np.ndarray, rows: np.ndarray) -> Iterator[np.ndarray]:
    """Unit float64 directions of `rows`, CHUNK_ROWS at a time."""
    for start in range(0, rows.size, CHUNK_ROWS):
        chunk = rows[start : start + CHUNK_ROWS]
        yield vectors[chunk].astype(np.float64) / norms[chunk, None]


def leading_components(covariance: np.ndarray, dims: int) -> tuple[np.ndarray, np.ndarray]:
    """The top `dims` eigenvectors of a covariance (as rows, signs fixed) and variance shares."""
    values, vectors = np.linalg.eigh(covariance)
    top = np.argsort(values)[::-1][:dims]
    components = fix_signs(vectors[:, top].T)
    total = float(np.trace(covariance))
    ratios = values[top] / total if total > 0 else np.zeros(dims)
    return np.ascontiguousarray(components), np.clip(ratios, 0.0, 1.0)


def fix_signs(components: np.ndarray) -> np.ndarray:
    """Each row flipped so that its largest-magnitude coordinate is positive."""
    largest = components[np.arange(len(components)), np.abs(components).argmax(axis=1)]
    return components * np.where(largest < 0, -1.0, 1.0)[:, None]


class Projector:
    """One table load's projection: the PCA basis, fitted once on first use, and selections.

    Thread-safe: concurrent first requests wait for one fit. A reload makes a new table and a
    new projector, so a basis never outlives the rows it was fitted on.
    """

    def __init__(self, table: EmbeddingTable, store: RowStore | None = None) -> None:
        self.table = table
        # The index's store when there is one: its norms and rows, not a second copy.
        self.store = store or RowStore.of(table)
        self._lock = threading.Lock()
        self._bases: dict[int, Basis] = {}

    @property
    def norms(self) -> np.ndarray:
        """float64 L2 norm of every row (0 for padding rows)."""
        return self.store.norms64

    @property
    def directional_rows(self) -> np.ndarray:
        """Rows with a direction (non-zero), in row order."""
        return self.store.indexed

    def basis(self, sample_limit: int = DEFAULT_SAMPLE_ROWS) -> Basis:
        """The PCA basis fitted on at most `sample_limit` rows; fitted on the first call only."""
        with self._lock:
            if sample_limit not in self._bases:
                sample = fit_sample(self.directional_rows, sample_limit)
                self._bases[sample_limit] = fit_basis(self.table.vectors, self.norms, sample)
            return self._bases[sample_limit]

    def fit_selection(self, rows: np.ndarray) -> Basis:
        """A PCA fitted on exactly `rows` (with a direction), fitted anew on every call."""
        return fit_selection(self.table.vectors, self.norms, rows)

    def select(self, selection: Selection, points: int, seed: int = 0) -> np.ndarray:
        """Rows to plot: the first `points` rows with a direction, or a seeded random set of them
        (in row order)."""
        rows = self.directional_rows
        if selection == "first" or points >= rows.size:
            return rows[:points]
        chosen = np.random.default_rng(seed).choice(rows.size, size=points, replace=False)
        return rows[np.sort(chosen)]

    def select_words(self, points: int, excluded: np.ndarray) -> tuple[np.ndarray, int]:
        """The first `points` whole-word rows with a direction, none of `excluded`, filled up
        with the first other rows when there are fewer (words.py); and how many are words."""
        style = PLAIN if self.table.model is None else self.table.model.pieces
        return first_words(self.table.tokens, style, self.directional_rows, points, excluded)

    def named_rows(self, rows: Sequence[int]) -> np.ndarray:
        """`rows` without repeats, in order; ZeroVector for a row with no direction."""
        unique = np.fromiter(dict.fromkeys(rows), dtype=np.int64)
        zero = unique[self.norms[unique] == 0]
        if zero.size:
            row = int(zero[0])
            raise ZeroVector(f"row {row} ({self.table.tokens[row]!r})")
        return unique

    def project_rows(self, basis: Basis, rows: np.ndarray, dims: int) -> np.ndarray:
        """Coordinates (len(rows) x dims) of table rows with a direction."""
        chunks = unit_chunks(self.table.vectors, self.norms, rows)
        parts = [basis.project(chunk, dims) for chunk in chunks]
        return np.concatenate(parts) if parts else np.empty((0, dims))

    def project_vectors(
        self, basis: Basis, vectors: Sequence[Sequence[float]] | Sequence[np.ndarray], dims: int
    ) -> np.ndarray:
        """Coordinates of raw vectors (each normalised first); DimensionMismatch, ZeroVector."""
        for vector in vectors:
            if len(vector) != self.table.width:
                raise DimensionMismatch(self.table.width, len(vector))
        raw = np.asarray(vectors, dtype=np.float64).reshape(len(vectors), self.table.width)
        norms = np.sqrt(np.sum(raw * raw, axis=1))
        zero = np.flatnonzero(~(norms > 0))
        if zero.size:
            raise ZeroVector(f"vector {int(zero[0])}")
        return basis.project(raw / norms[:, None], dims)

    def check_dims(self, basis: Basis, dims: int) -> int:
        """`dims`, if the basis has that many components; InvalidQuery otherwise."""
        if dims > basis.dims:
            raise InvalidQuery(
                f"at most {basis.dims} dims: the PCA has {basis.dims} components (the table is "
                f"{self.table.width} wide, the fit had {basis.sample_rows} rows)"
            )
        return dims
