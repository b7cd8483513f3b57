"""gensim's own arithmetic on a few rows, in its dtypes, for the methods answered from lookups.

doesnt_match, n_similarity and distances need only the rows they name: the client looks them
up (the table's float32 rows, bit for bit) and computes here exactly what gensim computes in
memory (matutils.unitvec, KeyedVectors.cosine_similarities and get_mean_vector).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def unit_vector(vector: np.ndarray) -> np.ndarray:
    """gensim's matutils.unitvec of a dense vector: itself over its L2 norm (zero stays zero)."""
    norm = np.sqrt(np.sum(vector**2))
    if norm > 0:
        return (vector / norm).astype(vector.dtype)
    return vector


def cosine_similarities(vector: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """gensim's KeyedVectors.cosine_similarities: the cosine of `vector` with each row."""
    norm = np.linalg.norm(vector)
    row_norms = np.linalg.norm(rows, axis=1)
    return np.asarray(np.dot(rows, vector) / (norm * row_norms))


def mean_vector(
    vectors: Sequence[np.ndarray], weights: Sequence[float] | None = None, normalize: bool = False
) -> np.ndarray:
    """gensim's get_mean_vector of given vectors: their weighted mean, unit length if asked."""
    width = len(vectors[0])
    weight = np.ones(len(vectors), dtype=np.float32) if weights is None else np.asarray(weights)
    mean = np.zeros(width, np.float32)
    total = 0.0
    for index, vector in enumerate(vectors):
        mean += weight[index] * vector
        total += abs(weight[index])
    if total > 0:
        mean = mean / total
    return unit_vector(mean).astype(np.float32) if normalize else mean


def unit_rows(rows: np.ndarray) -> np.ndarray:
    """Each row over its norm, as gensim's get_vector(key, norm=True) gives it."""
    norms = np.linalg.norm(rows, axis=1)
    return np.asarray(rows / norms[:, np.newaxis])


# The server scores every row in float32; gensim's whole-row answers take the dtype numpy's
# promotion gives its own expressions, which these run on one-row stand-ins of the same dtypes.
_ROW = np.ones((1, 1), np.float32)
_NORMS = np.ones(1, np.float32)


def distances_dtype(vector: np.dtype) -> np.dtype:
    """The dtype of gensim's distances(vector) over its float32 rows."""
    return (1 - cosine_similarities(np.ones(1, vector), _ROW)).dtype


def cosmul_dtype(positive: Sequence[np.dtype], negative: Sequence[np.dtype]) -> np.dtype:
    """The dtype of gensim's most_similar_cosmul(topn=None) for terms of these dtypes (a key's
    unit row is float32): float64 when there is no negative term, as its empty product is."""

    def factors(dtypes: Sequence[np.dtype]) -> list[np.ndarray]:
        return [(1 + np.dot(_ROW, np.ones(1, dtype)) / _NORMS) / 2 for dtype in dtypes]

    return (np.prod(factors(positive), axis=0) / (np.prod(factors(negative), axis=0) + 1e-6)).dtype
