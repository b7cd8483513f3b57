"""Batch entry points for items that may belong to different tables (the batchers' work)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from service.engine.search import scoring
from service.engine.search.cosine import Prepared, SimilarityIndex
from service.engine.search.queries import Neighbors, ScoreQuery, Scores

Query = TypeVar("Query")
Result = TypeVar("Result")


def search_per_table(items: Sequence[tuple[SimilarityIndex, Prepared]]) -> list[Neighbors]:
    """Search prepared neighbour/analogy queries, one pass per table."""
    return _per_index(items, lambda index, queries: index.search(queries))


def score_per_table(items: Sequence[tuple[SimilarityIndex, ScoreQuery]]) -> list[Scores]:
    """Score prepared queries, one matrix product per table."""
    return _per_index(items, scoring.score)


def _per_index(
    items: Sequence[tuple[SimilarityIndex, Query]],
    run: Callable[[SimilarityIndex, list[Query]], list[Result]],
) -> list[Result]:
    groups: dict[int, list[int]] = {}
    for i, (index, _) in enumerate(items):
        groups.setdefault(id(index), []).append(i)
    results: list[Result | None] = [None] * len(items)
    for members in groups.values():
        index = items[members[0]][0]
        for i, result in zip(members, run(index, [items[i][1] for i in members]), strict=True):
            results[i] = result
    return [result for result in results if result is not None]
