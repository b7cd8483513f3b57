"""Recall@10 of an approximate index against the exact path, on held-out rows.

The queries are token-neighbour queries of a seeded sample of rows (each row's own direction,
the row itself excluded), the way clients ask. The rows are held out of IVF training. The
exact answers (the truth) are computed once, when an index is built, and saved beside it, so a
load measures recall again in milliseconds: only the approximate side runs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from service.engine.search.approximate import RECALL_ROWS, ApproximateIndex, held_out_count
from service.engine.search.cosine import CosineSearch
from service.engine.search.queries import NeighborQuery, SearchOptions
from service.engine.search.store import RowStore

RECALL_QUERIES = RECALL_ROWS
RECALL_K = 10
RECALL_SEED = 0


@dataclass(frozen=True)
class Truth:
    """Held-out query rows and their exact top-k (rows; -1 pads a short answer)."""

    rows: np.ndarray
    neighbors: np.ndarray


@dataclass(frozen=True)
class Recall:
    """Recall@k of an index over `queries` held-out rows, and how long measuring took."""

    at_k: float
    k: int
    queries: int
    seconds: float


def held_out_rows(
    store: RowStore, count: int = RECALL_QUERIES, seed: int = RECALL_SEED
) -> np.ndarray:
    """A seeded sample of rows with a direction, sorted: at most a tenth of them, so the rest
    can train an index (a 50-row table held all 50 out, and IVF had none to train on)."""
    rng = np.random.default_rng(seed)
    size = held_out_count(store.indexed.size, count)
    return np.sort(rng.choice(store.indexed, size=size, replace=False))


def queries_of(
    search: CosineSearch, rows: np.ndarray, options: SearchOptions
) -> list[NeighborQuery]:
    """The token-neighbour query of each row: its direction, itself excluded."""
    directions = search.store.directions(rows)
    return [
        NeighborQuery(direction, RECALL_K, frozenset({int(row)}), options=options)
        for row, direction in zip(rows.tolist(), directions, strict=True)
    ]


def exact_truth(search: CosineSearch, rows: np.ndarray) -> Truth:
    """The exact answers to the held-out queries (one exhaustive pass, in blocks)."""
    answers = search.search(queries_of(search, rows, SearchOptions(exact=True)))
    neighbors = np.full((rows.size, RECALL_K), -1, dtype=np.int64)
    for i, answer in enumerate(answers):
        neighbors[i, : answer.ids.size] = answer.ids
    return Truth(rows, neighbors)


def measure_recall(
    search: CosineSearch,
    approximate: ApproximateIndex,
    truth: Truth,
    options: SearchOptions | None = None,
) -> Recall:
    """Recall@k of `approximate`'s rescored answers against the truth."""
    started = time.perf_counter()
    queries = queries_of(search, truth.rows, options or SearchOptions())
    answers = search.approximate_search(approximate, queries, None, options or SearchOptions())
    found = total = 0
    for answer, expected in zip(answers, truth.neighbors, strict=True):
        wanted = set(expected[expected >= 0].tolist())
        found += len(wanted & set(answer.ids.tolist()))
        total += len(wanted)
    at_k = found / total if total else 1.0
    return Recall(at_k, RECALL_K, int(truth.rows.size), time.perf_counter() - started)
