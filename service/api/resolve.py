"""Turns validated requests into engine queries: tokens to rows, limits, defaults.

Every token of a request is resolved in one pass, so a 404 names all unknown tokens at once.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence

import numpy as np

from service import schemas
from service.api.limits import Limits
from service.engine.errors import InvalidVector, UnknownToken
from service.engine.queries import AnalogyQuery, NeighborQuery, Term
from service.engine.registry import ServedTable


class Resolver:
    """Resolves one request's tokens against one table, within the configured limits."""

    def __init__(self, served: ServedTable, limits: Limits) -> None:
        self.served = served
        self.limits = limits
        self.rows: dict[str, int] = {}
        self.matched: dict[str, str] = {}

    def resolve(self, tokens: Iterable[str]) -> Resolver:
        """Look up every token; UnknownToken names all that are missing."""
        table = self.served.table
        unknown = []
        for token in dict.fromkeys(tokens):
            row = table.find(token, self.served.case_insensitive)
            if row is None:
                unknown.append(token)
                continue
            self.rows[token] = row
            if table.tokens[row] != token:
                self.matched[token] = table.tokens[row]
        if unknown:
            raise UnknownToken(unknown, self.served.name)
        return self

    def row(self, token: str) -> int:
        """The row of an already resolved token."""
        return self.rows[token]

    def row_array(self, tokens: Sequence[str]) -> np.ndarray:
        """Rows of already resolved tokens, as an int64 array."""
        return np.fromiter((self.rows[t] for t in tokens), dtype=np.int64, count=len(tokens))

    def exclusions(self, tokens: Sequence[str]) -> frozenset[int]:
        """Rows of the extra exclusions."""
        self.limits.check_exclusions(len(tokens))
        return frozenset(self.rows[t] for t in tokens)

    def neighbor_query(self, request: schemas.NeighborsRequest) -> NeighborQuery:
        """A neighbour query; a token or id query excludes itself."""
        exclude = self.exclusions(request.exclude)
        if request.vector is not None or request.vector_b64 is not None:
            vector = vector_of(request.vector, request.vector_b64)
        else:
            row = self.row(request.token) if request.token is not None else request.id
            assert row is not None
            vector = self.served.index.store.directions(self.served.table.check_ids([row]))[0]
            exclude = exclude | {row}
        return NeighborQuery(vector, self.limits.checked_k(request.k), exclude, request.restrict)

    def analogy_query(self, request: schemas.AnalogyRequest) -> AnalogyQuery:
        """An analogy query; its input tokens are excluded from the answer."""
        self.limits.check_terms(len(request.positive) + len(request.negative))
        return AnalogyQuery(
            positive=tuple(self._term(t) for t in request.positive),
            negative=tuple(self._term(t) for t in request.negative),
            k=self.limits.checked_k(request.k),
            method=request.method,
            exclude=self.exclusions(request.exclude),
            restrict=request.restrict,
        )

    def _term(self, term: schemas.Term) -> Term:
        if isinstance(term, str):
            return Term(row=self.row(term))
        if term.token is not None:
            return Term(row=self.row(term.token), weight=term.weight)
        return Term(vector=vector_of(term.vector, term.vector_b64), weight=term.weight)


def tokens_of(request: schemas.NeighborsRequest | schemas.AnalogyRequest) -> list[str]:
    """Every token a neighbour or analogy request names."""
    if isinstance(request, schemas.NeighborsRequest):
        named: list[str | None] = [request.token]
    else:
        terms = [*request.positive, *request.negative]
        named = [t if isinstance(t, str) else t.token for t in terms]
    return [t for t in named if t is not None] + list(request.exclude)


def vector_of(floats: list[float] | None, encoded: str | None) -> np.ndarray:
    """A request's vector, given as JSON floats or as base64 of little-endian float32s."""
    if floats is not None:
        return np.asarray(floats, dtype=np.float64)
    assert encoded is not None
    # The schema's pattern admits only base64 of whole float32s; check what it cannot state.
    values = np.frombuffer(base64.b64decode(encoded), dtype="<f4")
    bad = ~(np.abs(values) <= schemas.MAX_COMPONENT)  # NaN compares False: caught here too
    if bad.any():
        index = int(np.argmax(bad))
        raise InvalidVector(index, float(values[index]), schemas.MAX_COMPONENT)
    return values.astype(np.float64)
