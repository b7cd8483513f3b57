"""Batch entry points for items that may belong to different tables (the batchers' work)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple, TypeVar

from service.engine.search import scoring
from service.engine.search.cosine import CosineSearch, Plan, directions
from service.engine.search.queries import Neighbors, ScoreQuery, Scores

Query = TypeVar("Query")
Result = TypeVar("Result")


class SearchItem(NamedTuple):
    """A planned query, the search that answers it, and its work: the directions it scores
    against every row (a neighbour or 3CosAdd query one, a 3CosMul query one per term),
    counted once when the item is made (the request's limit and the batcher both read it)."""

    search: CosineSearch
    plan: Plan
    cost: int

    @classmethod
    def of(cls, search: CosineSearch, plan: Plan) -> SearchItem:
        """The item of `plan` on `search`."""
        return cls(search, plan, directions(plan))


def search_per_table(items: Sequence[SearchItem]) -> list[Neighbors]:
    """Search planned neighbour/analogy queries, one pass per table."""
    return _per_search(
        [(item.search, item.plan) for item in items],
        lambda search, queries: search.search(queries),
    )


def score_per_table(items: Sequence[tuple[CosineSearch, ScoreQuery]]) -> list[Scores]:
    """Score prepared queries, one matrix product per table."""
    return _per_search(items, scoring.score)


def _per_search(
    items: Sequence[tuple[CosineSearch, Query]],
    run: Callable[[CosineSearch, list[Query]], list[Result]],
) -> list[Result]:
    groups: dict[int, list[int]] = {}
    for i, (search, _) in enumerate(items):
        groups.setdefault(id(search), []).append(i)
    results: list[Result | None] = [None] * len(items)
    for members in groups.values():
        search = items[members[0]][0]
        for i, result in zip(members, run(search, [items[i][1] for i in members]), strict=True):
            results[i] = result
    return [result for result in results if result is not None]
