"""Candidate selection over score matrices computed in float32.

Candidates are every column within `slack` of a bound at or below a row's depth-th largest
score, not exactly `depth` columns: float32 products may differ in their last bits between
batch sizes, and rows may tie exactly, so a fixed cut could keep different rows for the same
query. With the slack, every row that can belong to the exact top-k is kept, whatever the batch.

Large rows use block maxima: the columns are dealt into interleaved blocks, and the depth-th
largest block maximum is a lower bound of the depth-th largest score (each of the depth best
blocks holds a score at least that high). Only blocks whose maximum reaches the bound are
looked into. Measured against a full partition on the default table: 0.4 ms against 5.8 ms
for 16 queries, 25 ms against 53 ms for 1024 (benchmarks/engine_throughput.py shows the net).
"""

from __future__ import annotations

import numpy as np

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


def candidate_rows(scores: np.ndarray, depth: int, slack: np.ndarray | float) -> list[np.ndarray]:
    """Per row of `scores`, its columns scoring within `slack` of a bound <= its depth-th best."""
    rows = scores.shape[0]
    slack = np.broadcast_to(np.asarray(slack, dtype=np.float64), (rows,))
    found: list[np.ndarray] = []
    for start in range(0, rows, CHUNK_ROWS):
        part = slice(start, start + CHUNK_ROWS)
        found.extend(_select(scores[part], depth, slack[part]))
    return found


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
