"""The selection of candidates: per row of a score matrix, every column that may belong to
its exact top k.

Selection (candidate_rows), over score matrices computed in float32: candidates are every
column within `slack` of a bound at or below a row's depth-th largest score, not exactly
`depth` columns: float32 products may differ in their last bits between batch sizes, and rows
may tie exactly, so a fixed cut could keep different rows for the same query. With the slack,
every row that can belong to the exact top-k is kept, whatever the batch.

Large rows use block maxima: the columns are dealt into interleaved blocks, and the depth-th
largest block maximum is a lower bound of the depth-th largest score (each of the depth best
blocks holds a score at least that high). Only blocks whose maximum reaches the bound are
looked into. Measured against a full partition on the default table: 0.4 ms against 5.8 ms
for 16 queries, 25 ms against 53 ms for 1024 (benchmarks/engine_throughput.py shows the net).

With search_kernel=compiled, where dots.c runs (AVX-512), the selection runs there too, outside
the GIL, whichever pass (dots.c's or BLAS's) computed the scores: with the rescoring's sums
(search/rescoring.py) they are worth 1.20x req/s over HTTP beside the compiled pass
(docs/exact-pass.md). It keeps every column within the slack of each row's depth-th best
itself, read once with a heap of the depth best (4-5 us a query on the default table against
numpy's 16-18). numpy's selection below answers everywhere else and is what
tests/engine/test_compiled_steps.py holds dots.c to.
"""

from __future__ import annotations

import numpy as np

from service.engine.search import dots

# Columns per block; blocks interleave (block b holds columns b, b + n, b + 2n, ...), so the
# maxima are one vectorised reduction over a contiguous axis. Evaluating the Google analogy set
# took 0.99 s with 32, 1.10 s with 64 and 1.25 s with 128, in one run (16 was no better than 32).
GROUPS = 32
# Partition this many extra columns per row on the small-table path; only a row with more
# near-ties than that is scanned in full.
TIE_ROOM = 16
# Rows selected together: the selection's temporaries (block copies, partition indices) are
# a few times one chunk of scores, whatever the batch (256 rows at once took 62 MB of int64
# partition indices on the default table).
CHUNK_ROWS = 32

# Room for candidates beyond the depth in compiled_candidates (a row with more near-ties than
# this is selected again in numpy): 8 KiB of row numbers a query at depth 10.
CANDIDATE_ROOM = 1_024


def candidate_rows(
    scores: np.ndarray, depth: int, slack: np.ndarray | float, compiled: bool = False
) -> list[np.ndarray]:
    """Per row of `scores`, its columns scoring within `slack` of a bound <= its depth-th best
    (by dots.c if `compiled` and it runs here, else numpy)."""
    rows = scores.shape[0]
    slack = np.broadcast_to(np.asarray(slack, dtype=np.float64), (rows,))
    found_there = compiled_candidates(scores, depth, slack) if compiled else None
    if found_there is not None:
        return found_there
    found: list[np.ndarray] = []
    for start in range(0, rows, CHUNK_ROWS):
        part = slice(start, start + CHUNK_ROWS)
        found.extend(_select(scores[part], depth, slack[part]))
    return found


def compiled_candidates(
    scores: np.ndarray, depth: int, slack: np.ndarray
) -> list[np.ndarray] | None:
    """candidate_rows by dots.c, bounded by each row's depth-th best itself (ascending columns);
    None where it does not run (not built, no AVX-512, float64 scores, a depth of 0 or beyond
    dots.MOST_DEPTH or the row, or more ties than CANDIDATE_ROOM leaves room for)."""
    count, columns = scores.shape
    if (
        not dots.SELECTS
        or scores.dtype != np.float32
        or not 1 <= depth <= min(columns, dots.MOST_DEPTH)
        or count == 0
    ):
        return None
    scores = np.ascontiguousarray(scores)
    slack = np.ascontiguousarray(slack, dtype=np.float64)
    room = min(columns, depth + CANDIDATE_ROOM)
    found = np.empty((count, room), dtype=np.int64)
    counts = np.empty(count, dtype=np.int64)
    assert dots.LIBRARY is not None
    done = dots.LIBRARY.dots_candidates(
        scores.ctypes.data, count, columns, depth, slack.ctypes.data, room,
        found.ctypes.data, counts.ctypes.data,
    )  # fmt: skip
    if done != 0:
        return None
    return [found[row, :kept] for row, kept in enumerate(counts.tolist())]


def _select(scores: np.ndarray, depth: int, slack: np.ndarray) -> list[np.ndarray]:
    rows, columns = scores.shape
    if columns // GROUPS > 2 * depth:
        return _by_blocks(scores, depth, slack)
    if depth + TIE_ROOM >= columns:
        return [np.arange(columns)] * rows
    return _by_partition(scores, depth, slack)


def _by_blocks(scores: np.ndarray, depth: int, slack: np.ndarray) -> list[np.ndarray]:
    rows, columns = scores.shape
    blocks = columns // GROUPS
    dealt = scores[:, : GROUPS * blocks].reshape(rows, GROUPS, blocks)
    block_max = dealt.max(axis=1)
    bound = np.partition(block_max, blocks - depth, axis=1)[:, blocks - depth] - slack
    hit_rows, hit_blocks = np.nonzero(block_max >= bound[:, None])
    keep = dealt[hit_rows, :, hit_blocks] >= bound[hit_rows, None]
    found_rows = np.broadcast_to(hit_rows[:, None], keep.shape)[keep]
    found_columns = (hit_blocks[:, None] + blocks * np.arange(GROUPS))[keep]
    tail_rows, tail_columns = np.nonzero(scores[:, GROUPS * blocks :] >= bound[:, None])
    found_rows = np.concatenate([found_rows, tail_rows])
    found_columns = np.concatenate([found_columns, tail_columns + GROUPS * blocks])
    order = np.argsort(found_rows, kind="stable")
    splits = np.searchsorted(found_rows[order], np.arange(1, rows))
    return np.split(found_columns[order], splits)


def _by_partition(scores: np.ndarray, depth: int, slack: np.ndarray) -> list[np.ndarray]:
    rows, columns = scores.shape
    room = depth + TIE_ROOM
    best = np.argpartition(scores, columns - room, axis=1)[:, columns - room :]
    values = np.take_along_axis(scores, best, axis=1)
    bound = np.partition(values, TIE_ROOM, axis=1)[:, TIE_ROOM] - slack
    crowded = values.min(axis=1) >= bound  # every partitioned column ties: look at them all
    return [
        np.flatnonzero(scores[i] >= bound[i]) if crowded[i] else best[i][values[i] >= bound[i]]
        for i in range(rows)
    ]
