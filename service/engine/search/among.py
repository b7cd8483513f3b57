"""Search among named rows: each query's top k among exactly a candidate set of rows.

A candidate set is small next to a table (at most max_among rows), so it is searched
exhaustively whatever index the table has, in the same two steps as the full pass: the set's
rows are scored in float32 by the table's kernel, every row within the kernel's slack of a
query's depth-th best is kept (selection.py), and the candidates are rescored exactly in
float64 (rescoring.py). Exclusions and zero rows are masked as on the full pass, so the answer is
the exact top k of the set's rows with a direction, minus the query's inputs, ties by row id.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from service.engine.search.kernels import SCORES_BUDGET, Kernel
from service.engine.search.queries import Among
from service.engine.search.selection import candidate_rows
from service.engine.tables.table import EmbeddingTable

# Bytes of a set's float32 rows gathered at once (16 MB: 10,900 rows of 384, 1,000 of 4,096).
GATHER_BYTES = 16 * 2**20


def among_of(table: EmbeddingTable, ids: Iterable[int]) -> Among:
    """The candidate set of `ids` (repeats count once); UnknownId names every id outside the
    table's rows."""
    return Among(np.unique(table.check_ids(ids)))


def among_candidates(
    kernel: Kernel,
    directions: np.ndarray,
    depth: int,
    rows: np.ndarray,
    excluded: Sequence[np.ndarray],
) -> list[np.ndarray]:
    """Per direction, the rows of `rows` (sorted) among its `depth` best and any that may tie
    with them, its excluded rows left out; rows whose scores are untrusted are always kept."""
    masked = np.isin(rows, kernel.masked)
    always = rows[np.isin(rows, kernel.always)]
    per_part = max(1, SCORES_BUDGET // max(1, rows.size))
    found: list[np.ndarray] = []
    for start in range(0, len(directions), per_part):
        part = slice(start, start + per_part)
        scores = _scores(kernel, directions[part], rows)
        scores[:, masked] = -np.inf
        for query, positions in enumerate(excluded[part]):
            scores[query, _positions(rows, positions)] = -np.inf
        found += [
            rows[columns]
            for columns in candidate_rows(scores, depth, kernel.error, kernel.compiled)
        ]
    if not always.size:
        return found
    return [np.concatenate([kept, np.setdiff1d(always, kept)]) for kept in found]


def _scores(kernel: Kernel, directions: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """(len(directions), len(rows)) float32 cosines, the rows gathered a block at a time."""
    width = directions.shape[1]
    block = max(1, GATHER_BYTES // (4 * width))
    scores = np.empty((len(directions), rows.size), dtype=np.float32)
    for start in range(0, rows.size, block):
        stop = start + block
        scores[:, start:stop] = kernel.scores_of(directions, rows[start:stop])
    return scores


def _positions(rows: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """Where the sorted `chosen` rows that are in sorted `rows` sit in `rows`."""
    at = np.searchsorted(rows, chosen)
    inside = at < rows.size
    at = at[inside]
    return at[rows[at] == chosen[inside]]
