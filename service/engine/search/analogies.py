"""Analogies planned for the search, as gensim defines them.

`add` (most_similar, 3CosAdd) becomes a neighbour query of the unit weighted mean of its terms:
table rows at unit length, raw vectors as given; the terms may all be negative (the direction is
then minus their mean). Analogies over table rows only are planned together (terms.py). `mul`
(most_similar_cosmul, 3CosMul) becomes a CosmulQuery of unit terms, or, with raw vectors taken
as given, of their directions and norms (cosmul_given.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from service.engine.errors import InvalidQuery
from service.engine.search.cosmul_given import given_scales
from service.engine.search.queries import (
    AnalogyQuery,
    CosmulQuery,
    NeighborQuery,
    Plan,
    Term,
)
from service.engine.search.store import RowStore
from service.engine.search.terms import mean_directions


def plan_analogy(store: RowStore, query: AnalogyQuery) -> Plan:
    """Validate an analogy: `add` becomes a neighbour query of the mean direction."""
    if query.method == "mul":
        return _plan_cosmul(store, query)
    if _rows_only_add(query):
        return mean_directions(store, [query])[0]
    return _mean_direction(store, query)


def plan_analogies(store: RowStore, queries: Sequence[AnalogyQuery]) -> list[Plan]:
    """plan_analogy for many queries; `add` ones over table rows are planned at once."""
    together = [i for i, query in enumerate(queries) if _rows_only_add(query)]
    planned: dict[int, Plan] = {}
    if together:
        directions = mean_directions(store, [queries[i] for i in together])
        planned.update(zip(together, directions, strict=True))
    return [planned[i] if i in planned else plan_analogy(store, q) for i, q in enumerate(queries)]


def _term_vectors(store: RowStore, terms: Sequence[Term], unit: bool) -> np.ndarray:
    """Terms as float64 rows: table rows unit-normalised; raw vectors as given, or unit."""
    return np.stack([_term_vector(store, term, unit) for term in terms])


def _term_vector(store: RowStore, term: Term, unit: bool) -> np.ndarray:
    if term.vector is not None:
        if unit or term.unit:
            return store.direction(term.vector, term.what)
        return store.check_vector(term.vector).astype(np.float64)
    if term.row is None:
        raise InvalidQuery("an analogy term needs a row or a vector")
    return store.directions(np.asarray([term.row]))[0]


def _mean_direction(store: RowStore, query: AnalogyQuery) -> NeighborQuery:
    """gensim's weighted mean of terms that include raw vectors, as a neighbour query.

    Analogies over table rows only go through terms.mean_directions instead.
    """
    terms = query.positive + query.negative
    if not terms:
        raise InvalidQuery("an analogy needs at least one term")
    signs = [1.0] * len(query.positive) + [-1.0] * len(query.negative)
    weights = np.asarray([s * t.weight for s, t in zip(signs, terms, strict=True)])
    mean = np.sum(weights[:, None] * _term_vectors(store, terms, unit=False), axis=0)
    direction = store.direction(mean, "the weighted mean of the analogy terms")
    return NeighborQuery(
        direction, query.k, query.input_rows(), query.restrict, options=query.options
    )


def _plan_cosmul(store: RowStore, query: AnalogyQuery) -> CosmulQuery:
    """3CosMul terms as unit vectors, so every factor is a shifted cosine in [0, 1]; raw
    vectors taken as given scale their cosines by their norms instead (cosmul_given.py)."""
    if not query.positive:
        raise InvalidQuery("3CosMul needs at least one positive term")
    terms = query.positive + query.negative
    given = query.vector_terms == "as_given" and any(_raw(term) for term in terms)
    vectors, scales = _term_vectors(store, terms, unit=not given), None
    if given:
        vectors, scales = given_scales(vectors, terms)
    return CosmulQuery(
        terms=vectors,
        exponents=np.asarray([t.weight for t in terms], dtype=np.float64),
        positives=len(query.positive),
        k=query.k,
        exclude=query.input_rows(),
        restrict=query.restrict,
        scales=scales,
    )


def _raw(term: Term) -> bool:
    return term.vector is not None and not term.unit


def _rows_only_add(query: AnalogyQuery) -> bool:
    terms = query.positive + query.negative
    return query.method == "add" and bool(terms) and all(t.vector is None for t in terms)
