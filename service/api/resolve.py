"""Turns validated requests into engine queries: tokens to rows, limits, defaults.

Every token of a request is resolved in one pass, so a 404 names all unknown tokens at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from service import schemas
from service.config import Settings
from service.engine.errors import LimitExceeded, UnknownToken
from service.engine.queries import AnalogyQuery, NeighborQuery, Term
from service.engine.registry import ServedTable


class Resolver:
    """Resolves one request's tokens against one table and enforces the configured limits."""

    def __init__(self, served: ServedTable, settings: Settings) -> None:
        self.served = served
        self.settings = settings
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

    def k(self, k: int | None) -> int:
        """The request's k, or the default; LimitExceeded above max_k."""
        k = self.settings.default_k if k is None else k
        return _within("k", k, self.settings.max_k)

    def batch(self, size: int) -> int:
        """A batch or list size; LimitExceeded above max_batch."""
        return _within("batch size", size, self.settings.max_batch)

    def batch_of(self, items: list[int]) -> list[int]:
        """`items`, after checking their count against max_batch."""
        self.batch(len(items))
        return items

    def matrix_size(self, size: int) -> int:
        """Tokens in a similarity matrix; LimitExceeded above max_matrix_tokens."""
        return _within("similarity matrix tokens", size, self.settings.max_matrix_tokens)

    def exclusions(self, tokens: Sequence[str]) -> frozenset[int]:
        """Rows of the extra exclusions."""
        _within("exclusions", len(tokens), self.settings.max_exclude)
        return frozenset(self.rows[t] for t in tokens)

    def neighbor_query(self, request: schemas.NeighborsRequest) -> NeighborQuery:
        """A neighbour query; a token or id query excludes itself."""
        exclude = self.exclusions(request.exclude)
        if request.vector is not None:
            vector = np.asarray(request.vector, dtype=np.float64)
        else:
            row = self.row(request.token) if request.token is not None else request.id
            assert row is not None
            vector = self.served.index.store.directions(self.served.table.check_ids([row]))[0]
            exclude = exclude | {row}
        return NeighborQuery(vector, self.k(request.k), exclude, request.restrict)

    def analogy_query(self, request: schemas.AnalogyRequest) -> AnalogyQuery:
        """An analogy query; its input tokens are excluded from the answer."""
        terms = len(request.positive) + len(request.negative)
        _within("analogy terms", terms, self.settings.max_terms)
        return AnalogyQuery(
            positive=tuple(self._term(t) for t in request.positive),
            negative=tuple(self._term(t) for t in request.negative),
            k=self.k(request.k),
            method=request.method,
            exclude=self.exclusions(request.exclude),
            restrict=request.restrict,
        )

    def _term(self, term: schemas.Term) -> Term:
        if isinstance(term, str):
            return Term(row=self.row(term))
        if term.token is not None:
            return Term(row=self.row(term.token), weight=term.weight)
        return Term(vector=np.asarray(term.vector, dtype=np.float64), weight=term.weight)


def tokens_of(request: schemas.NeighborsRequest | schemas.AnalogyRequest) -> list[str]:
    """Every token a neighbour or analogy request names."""
    if isinstance(request, schemas.NeighborsRequest):
        named: list[str | None] = [request.token]
    else:
        terms = [*request.positive, *request.negative]
        named = [t if isinstance(t, str) else t.token for t in terms]
    return [t for t in named if t is not None] + list(request.exclude)


def _within(what: str, value: int, limit: int) -> int:
    if value > limit:
        raise LimitExceeded(what, limit, value)
    return value
