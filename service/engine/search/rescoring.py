"""The float64 rescoring: each query's candidates scored exactly from the raw rows, best k
first.

Rescoring: all queries of a batch are rescored in a few array operations. Each score is one dot
product summed on its own (never a matrix product whose blocking depends on how many candidates
there are), so a query's answer is the same whatever else was in its batch. A batch of one query
(an approximate search serves one query per call) takes a shorter road to the same answer, bit
for bit: one sort of its candidates, one gather, one product and one sum (about 15 numpy calls
against about 30; the path around FAISS was half of a fast-scan query: BENCHMARKS.md).

With search_kernel=compiled, where dots.c runs (AVX-512), a batch's float64 sums are computed
there too, outside the GIL, whichever pass computed the scores: with the selection
(search/selection.py) they are worth 1.20x req/s over HTTP beside the compiled pass
(docs/exact-pass.md). They are read from the table in place, a column at a time for 32
candidates with the next columns prefetched, summed as numpy sums (its pairwise order), so the
same bits (about 26 us for 10 candidates of the default table against 45 by numpy's gathers, in
batches of 16 queries). A lone query's candidates (rescore_one) stay with numpy: there dots.c
measured 1.07-1.08x at best. numpy's rescoring below answers everywhere else and is what
tests/engine/test_compiled_steps.py holds dots.c to.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from service.engine.errors import DimensionMismatch
from service.engine.search import dots
from service.engine.search.queries import NeighborQuery, Neighbors
from service.engine.search.store import FLOAT32, RowStore, gather_rows, stored_by_columns

# Candidates rescored together: 512 rows of 384 float64 are 1.5 MB per temporary.
CHUNK = 512
# Queries rescored together: their candidate and exclusion arrays are the other temporaries
# (256 queries with k=1000 and 1,000 exclusions each held 25 MB of them at once).
QUERY_CHUNK = 32
# The most bytes of candidate rows stored by columns gathered at once for a batch's rescoring
# (10,922 rows of the default table's 384 float32): see _groups.
GATHER_BUDGET = 16 * 2**20
# Candidates of a batch are gathered together when there is at least one in this many rows of
# the table (about every other cache line of a column): the default table's 30,522 rows, from
# 954 candidates on (a batch of about 96 queries with k=10). See _groups.
SHARING = 32
# Candidate-exclusion pairs compared directly (a boolean matrix of this many cells, 64 KiB)
# rather than through np.isin.
SMALL_EXCLUSION_PRODUCT = 65_536


def rescore(
    store: RowStore,
    queries: Sequence[NeighborQuery],
    positions: Sequence[np.ndarray] | np.ndarray,
    compiled: bool = False,
) -> list[Neighbors]:
    """Each query's candidates scored in float64 from the raw rows, best k first (ties: id);
    a batch's sums by dots.c if `compiled` and it runs here."""
    if len(queries) == 1 and len(positions[0]) <= CHUNK:
        return [rescore_one(store, queries[0], np.asarray(positions[0], dtype=np.int64))]
    return rescore_batch(store, queries, positions, compiled)


def rescore_batch(
    store: RowStore,
    queries: Sequence[NeighborQuery],
    positions: Sequence[np.ndarray] | np.ndarray,
    compiled: bool = False,
) -> list[Neighbors]:
    """rescore() for any number of queries, QUERY_CHUNK at a time."""
    compiled = compiled and dots.RESCORES
    # dots.c reads the table in place: nothing to gather first.
    groups = (
        [(slice(0, len(queries)), False)] if compiled else _groups(store, positions, len(queries))
    )
    results: list[Neighbors] = []
    for group, gather in groups:
        results.extend(_rescore_group(store, queries[group], positions[group], gather, compiled))
    return results


# Rows of a table for ids: (len(ids), width), laid out as gather_rows lays them out.
Source = Callable[[np.ndarray], np.ndarray]


def _groups(
    store: RowStore, positions: Sequence[np.ndarray] | np.ndarray, queries: int
) -> list[tuple[slice, bool]]:
    """Consecutive queries, and whether their candidate rows are gathered together first.

    A row stored by columns is read from `width` places, one cache line each; rows gathered
    together share those lines once they are dense enough, at least one row in SHARING of the
    table. So the candidates of many queries are gathered together, at most GATHER_BUDGET
    bytes of them, when they are that dense (the default table: the rescoring of a batch of 256
    queries 1.3-1.6x as fast, of 128 1.05-1.2x; BENCHMARKS.md). The scores are the same to the
    bit: the same float32 values, summed the same way, only read from a smaller copy. Rows
    stored row after row, sparse candidates, or one query's candidates beyond the budget are
    read from the table itself.
    """
    rows = store.table.rows
    if not stored_by_columns(store.vectors) or sum(map(len, positions)) * SHARING < rows:
        return [(slice(0, queries), False)]
    most = max(1, GATHER_BUDGET // (4 * store.vectors.shape[1]))
    groups: list[tuple[slice, bool]] = []
    start, held = 0, 0
    for query, candidates in enumerate(positions):
        if query > start and held + len(candidates) > most:
            groups.append((slice(start, query), held <= most and held * SHARING >= rows))
            start, held = query, 0
        held += len(candidates)
    groups.append((slice(start, queries), held <= most and held * SHARING >= rows))
    return groups


def _rescore_group(
    store: RowStore,
    queries: Sequence[NeighborQuery],
    positions: Sequence[np.ndarray] | np.ndarray,
    gather: bool,
    compiled: bool,
) -> list[Neighbors]:
    """rescore() of one group, QUERY_CHUNK queries at a time (its gathered rows, if any, are
    freed on return: one group's at a time)."""
    source = _gathered(store, positions) if gather else partial(gather_rows, store.vectors)
    results: list[Neighbors] = []
    for start in range(0, len(queries), QUERY_CHUNK):
        part = slice(start, start + QUERY_CHUNK)
        results.extend(_rescore(store, source, queries[part], positions[part], compiled))
    return results


def _gathered(store: RowStore, positions: Sequence[np.ndarray] | np.ndarray) -> Source:
    """Some queries' candidate rows gathered in one pass, then taken from by table id."""
    flat = np.unique(np.concatenate([np.asarray(p, dtype=np.int64) for p in positions]))
    ids = flat[flat.searchsorted(0) :]
    rows = gather_rows(store.vectors, ids)
    return lambda wanted: gather_rows(rows, ids.searchsorted(wanted))


def _rescore(
    store: RowStore,
    source: Source,
    queries: Sequence[NeighborQuery],
    positions: Sequence[np.ndarray] | np.ndarray,
    compiled: bool,
) -> list[Neighbors]:
    counts = [len(p) for p in positions]
    flat = np.concatenate([np.asarray(p, dtype=np.int64) for p in positions])
    owner = np.repeat(np.arange(len(queries)), counts)
    valid = flat >= 0
    ids, owner = flat[valid], owner[valid]
    # Zero rows have no direction (a pass can keep them when it keeps every row).
    keep = (store.norms64[ids] > 0) & ~_excluded(queries, owner, ids, store.table.rows)
    ids, owner = ids[keep], owner[keep]
    directions = np.stack([q.vector for q in queries])
    if compiled:
        scores = compiled_dots(store.vectors, ids, directions, owner)
    else:
        scores = _dots(source, ids, directions, owner)
    scores /= store.norms64[ids]
    order = np.lexsort((ids, -scores, owner))
    ids, scores, owner = ids[order], scores[order], owner[order]
    bounds = np.searchsorted(owner, np.arange(len(queries) + 1))
    starts, ends = bounds[:-1], bounds[1:]
    return [
        Neighbors(ids=ids[start:stop], scores=scores[start:stop])
        for query, start, end in zip(queries, starts, ends, strict=True)
        for stop in [min(start + query.k, end)]
    ]


def rescore_one(store: RowStore, query: NeighborQuery, positions: np.ndarray) -> Neighbors:
    """One query's candidates (-1 pads; at most CHUNK, for the temporaries) rescored: the same
    answer as rescore_batch's, ids and scores to the last bit (tests/engine/test_rescoring.py)."""
    ids = np.sort(positions)  # row order for the gather; ties then fall to the lower id
    ids = ids[ids.searchsorted(0) :]
    norms = store.norms64[ids]
    keep = _kept_one(store, query, ids, norms)
    if keep is not None:
        ids, norms = ids[keep], norms[keep]
    # Summed as _dots and dots.c sum, to the last bit: float64 products laid out row by row,
    # each row's summed along it (numpy's pairwise sum; summed down the columns, the last bits
    # differ).
    products = np.multiply(gather_rows(store.vectors, ids), query.vector, dtype=np.float64,
                           order="C")  # fmt: skip
    scores = np.add.reduce(products, axis=1) / norms
    best = np.argsort(-scores, kind="stable")[: query.k]
    return Neighbors(ids=ids[best], scores=scores[best])


def _kept_one(
    store: RowStore, query: NeighborQuery, ids: np.ndarray, norms: np.ndarray
) -> np.ndarray | None:
    """Which of one query's candidates are neither zero rows nor excluded; None: all are."""
    keep = None if store.zero.size == 0 else norms > 0
    if not query.exclude:
        return keep
    excluded = np.fromiter(query.exclude, dtype=np.int64, count=len(query.exclude))
    if ids.size * excluded.size <= SMALL_EXCLUSION_PRODUCT:
        kept = (ids[:, None] != excluded[None, :]).all(axis=1)
    else:
        kept = ~np.isin(ids, excluded)
    return kept if keep is None else kept & keep


def _dots(source: Source, ids: np.ndarray, directions: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """Float64 dot products of rows `ids` with their owners' directions, CHUNK rows at a time.

    Each dot product is summed on its own, so a score never depends on the other candidates;
    the chunks only keep the float64 temporaries in cache.
    """
    sums = np.empty(ids.size)
    for start in range(0, ids.size, CHUNK):
        # Gathered in row order: rows stored by columns (tables/layout.py) are read from
        # `width` places each, and in order those reads share cache lines (2x faster).
        order = start + np.argsort(ids[start : start + CHUNK], kind="stable")
        raw = source(ids[order]).astype(np.float64)
        sums[order] = np.sum(raw * directions[owner[order]], axis=1)
    return sums


def compiled_dots(
    vectors: np.ndarray, ids: np.ndarray, directions: np.ndarray, owner: np.ndarray
) -> np.ndarray:
    """_dots by dots.c, read from the table in place: each row's float64 products summed as
    numpy sums them, the same bits (tests/engine/test_compiled_steps.py). Only where
    dots.RESCORES; IndexError for an id outside the table (the C reads what it is given)."""
    assert dots.LIBRARY is not None
    order = np.argsort(ids, kind="stable")  # each column read forward
    ids = np.ascontiguousarray(ids[order], dtype=np.int64)
    if ids.size and (ids[0] < 0 or ids[-1] >= len(vectors)):
        raise IndexError(f"row {ids[0] if ids[0] < 0 else ids[-1]} outside {len(vectors)} rows")
    owner = np.ascontiguousarray(owner[order], dtype=np.int64)
    directions = np.ascontiguousarray(directions, dtype=np.float64)
    width = vectors.shape[1]
    if directions.shape[1] != width:
        raise DimensionMismatch(directions.shape[1], width)
    sums = np.empty(ids.size)
    if ids.size:
        row_step, column_step = (stride // FLOAT32 for stride in vectors.strides)
        failed = dots.LIBRARY.dots_rescore(
            vectors.ctypes.data, row_step, column_step, width, ids.ctypes.data,
            owner.ctypes.data, ids.size, directions.ctypes.data, sums.ctypes.data,
        )  # fmt: skip
        if failed:
            raise MemoryError("no room for the rescoring's products")
    out = np.empty_like(sums)
    out[order] = sums
    return out


def _excluded(
    queries: Sequence[NeighborQuery], owner: np.ndarray, ids: np.ndarray, rows: int
) -> np.ndarray:
    """Which (query, row) candidate pairs name a row the query excludes."""
    parts = [
        i * rows + np.fromiter(query.exclude, dtype=np.int64, count=len(query.exclude))
        for i, query in enumerate(queries)
        if query.exclude
    ]
    if not parts:
        return np.zeros(ids.size, dtype=bool)
    pairs, excluded = owner * rows + ids, np.concatenate(parts)
    if pairs.size * excluded.size <= SMALL_EXCLUSION_PRODUCT:
        # np.isin sorts both sides: for one query's few exclusions that cost more than the
        # rest of its rescoring (70 us of a 500 us fast-scan query).
        return (pairs[:, None] == excluded[None, :]).any(axis=1)
    return np.isin(pairs, excluded)
