"""Under-training indicators of "Fishing for Magikarp" (Land & Bartolo, EMNLP 2024), in numpy.

- With reference rows (tokens known never to occur in training): the cosine of each row with
  the mean reference row, both with the table's first principal component removed. The first
  component is that of the centred rows (a PCA of the whole table, as the paper's code fits
  sklearn's PCA(1) on every row), and it is removed from the raw rows: x' = x - (x.p) p. Rows
  most similar to the reference mean are the most suspect. The denominator is clipped at 1e-6
  as in the paper's code, so a zero row has cosine 0.
- Without: the row's L2 norm, low being suspect (the paper's indicator for the input
  embeddings of untied models).

Never a float64 copy of the table: the covariance and every per-row product are accumulated
over CHUNK_ROWS rows at a time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from service.engine.errors import InvalidQuery

# 8192 rows of width 384 are 12.6 MB in float32; large enough for BLAS to run at full speed.
CHUNK_ROWS = 8192
# The paper's code clips the cosine's denominator here (rows of zeros in some tables).
CLIP = 1e-6

IndicatorName = Literal["reference_cosine", "norm"]


@dataclass(frozen=True)
class Component:
    """The table's first principal component and every row's coordinate along it."""

    direction: np.ndarray
    along: np.ndarray


def row_sums(vectors: np.ndarray) -> np.ndarray:
    """The float64 sum of all rows, chunk by chunk."""
    total = np.zeros(vectors.shape[1])
    for start in range(0, len(vectors), CHUNK_ROWS):
        total += vectors[start : start + CHUNK_ROWS].sum(axis=0, dtype=np.float64)
    return total


def covariance(vectors: np.ndarray) -> np.ndarray:
    """Scatter matrix of the centred rows: float32 products per chunk, summed in float64.

    A float64 product would take 2.5 times as long (7 s against 2.7 s at 1,000,000 x 300 on
    one core) for a first component that agrees to 1e-11.
    """
    mean = (row_sums(vectors) / len(vectors)).astype(np.float32)
    width = vectors.shape[1]
    scatter = np.zeros((width, width))
    for start in range(0, len(vectors), CHUNK_ROWS):
        centred = vectors[start : start + CHUNK_ROWS] - mean
        scatter += (centred.T @ centred).astype(np.float64)
    return scatter


def first_component(vectors: np.ndarray) -> Component:
    """The first principal component of the centred rows, and each raw row's coordinate."""
    _, eigenvectors = np.linalg.eigh(covariance(vectors))
    direction = eigenvectors[:, -1]
    along = products(vectors, direction[:, None])[:, 0]
    return Component(direction, along)


def products(vectors: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """rows x k float64 dot products of every row with the columns of `directions`."""
    out = np.empty((len(vectors), directions.shape[1]))
    for start in range(0, len(vectors), CHUNK_ROWS):
        out[start : start + CHUNK_ROWS] = vectors[start : start + CHUNK_ROWS] @ directions
    return out


def reference_cosines(
    vectors: np.ndarray, norms: np.ndarray, component: Component, reference: np.ndarray
) -> np.ndarray:
    """Cosine of every row with the mean reference row, the first component removed from both.

    With p the component, x' = x - (x.p)p and m' = mean(x'_r) = m - (m.p)p; since m' is
    orthogonal to p, x'.m' = x.m' and |x'|^2 = |x|^2 - (x.p)^2, so no row is ever rewritten.
    """
    direction = component.direction
    mean = reference_mean(vectors, reference)
    mean -= (mean @ direction) * direction
    mean_norm = float(np.sqrt(mean @ mean))
    if not mean_norm > 0:
        raise InvalidQuery("the reference rows' mean is zero once the first component is removed")
    dots = products(vectors, mean[:, None])[:, 0]
    remaining = np.sqrt(np.maximum(norms * norms - component.along**2, 0.0))
    return dots / np.maximum(remaining * mean_norm, CLIP)


def reference_mean(vectors: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """The float64 mean of the reference rows, gathered CHUNK_ROWS at a time."""
    total = np.zeros(vectors.shape[1])
    for start in range(0, reference.size, CHUNK_ROWS):
        total += vectors[reference[start : start + CHUNK_ROWS]].sum(axis=0, dtype=np.float64)
    return total / reference.size


@dataclass(frozen=True, eq=False)
class Ranking:
    """Candidate rows ordered from most to least suspect under one indicator.

    `values` holds the indicator of every row of the table; `keys` the candidates' sort keys
    (lower is more suspect) in ranked order, so a row's percentile is a binary search.
    """

    indicator: IndicatorName
    why: str
    values: np.ndarray
    order: np.ndarray
    keys: np.ndarray
    reference: np.ndarray

    @property
    def candidates(self) -> int:
        """Rows ranked: every row but the reference rows and the zero rows."""
        return int(self.order.size)

    def key(self, rows: np.ndarray) -> np.ndarray:
        """Sort keys of `rows`: lower is more suspect."""
        return sort_keys(self.indicator, self.values[rows])

    def suspect_count(self, fraction: float) -> int:
        """How many candidates are suspects at `fraction` (at least one, if any is ranked)."""
        return min(self.candidates, max(1, math.floor(fraction * self.candidates + 1e-9)))

    def suspects(self, fraction: float) -> np.ndarray:
        """The `fraction` most suspect candidates, most suspect first."""
        return self.order[: self.suspect_count(fraction)]

    def percentiles(self, rows: np.ndarray) -> np.ndarray:
        """For each row: the share (in %) of candidates at least as suspect as it."""
        at_least = np.searchsorted(self.keys, self.key(rows), side="right")
        return 100.0 * at_least / max(self.candidates, 1)


def sort_keys(indicator: IndicatorName, values: np.ndarray) -> np.ndarray:
    """Indicator values as sort keys, lower being more suspect."""
    return -values if indicator == "reference_cosine" else values


def rank(
    indicator: IndicatorName,
    why: str,
    values: np.ndarray,
    candidates: np.ndarray,
    reference: np.ndarray,
) -> Ranking:
    """Rank `candidates` (rows, ascending) by `values`; ties keep row order."""
    keys = sort_keys(indicator, values[candidates])
    order = np.argsort(keys, kind="stable")
    return Ranking(indicator, why, values, candidates[order], keys[order], reference)
