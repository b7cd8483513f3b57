"""Resolution: the Resolver turns a query's tokens, ids, texts and vectors into rows of its
table and into engine queries. Every token and text of a request is resolved in one pass, so
a 404 names all unknown tokens (and unknown words of texts) at once.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from dataclasses import replace

import numpy as np

from service.engine.errors import (
    EmptyText,
    InvalidVector,
    SeveralPieces,
    UnknownToken,
)
from service.engine.search.approximate import check_options
from service.engine.search.queries import (
    DEFAULT_SEARCH,
    Among,
    AnalogyQuery,
    NeighborQuery,
    SearchOptions,
    Term,
)
from service.engine.served import ServedTable
from service.engine.tables.embedding import pool, split_texts
from service.engine.tables.text import mean_row
from service.operations.context import Context
from service.operations.hints import hint_for
from service.operations.limits import Limits
from service.schemas.common import MAX_COMPONENT, Key, TextKey
from service.schemas.search import (
    AnalogyRequest,
    AnalogyTerms,
    NeighborsRequest,
    QuerySource,
    RequestTerm,
    SearchFields,
)

# A text as a request names it: (text, "one" | "mean").
TextName = tuple[str, str]


class Resolver:
    """Resolves one request's tokens and texts against one table, within the limits."""

    def __init__(self, served: ServedTable, limits: Limits) -> None:
        self.served = served
        self.limits = limits
        self.rows: dict[str, int] = {}
        self.texts: dict[TextName, list[int]] = {}
        self.matched: dict[str, str | list[str]] = {}

    def resolve(self, tokens: Iterable[str], texts: Iterable[TextName] = ()) -> Resolver:
        """Look up every token and split every text; UnknownToken names all that are missing."""
        unknown = self._look_up(tokens)
        names = list(dict.fromkeys(texts))
        if names:
            self.limits.check_text_length(sum(len(text) for text, _ in names))
        for name in names:
            try:
                self.texts[name] = self._split(*name)
            except UnknownToken as error:  # a word table's unknown words, named with the rest
                unknown.extend(error.details["tokens"])
        if unknown:
            unknown = list(dict.fromkeys(unknown))
            hint = hint_for(self.served, unknown)
            if hint is None:
                raise UnknownToken(unknown, self.served.name)
            raise UnknownToken(unknown, self.served.name, hint.for_request(), hint.to_json())
        return self

    def _look_up(self, tokens: Iterable[str]) -> list[str]:
        vocabulary = self.served.table.vocabulary
        unknown = []
        for token in dict.fromkeys(tokens):
            row = vocabulary.find(token)
            if row is None and self.served.case_insensitive:
                row = vocabulary.find_folded(token)
                if row is not None and vocabulary[row] != token:
                    self.matched[token] = vocabulary[row]
            if row is None:
                unknown.append(token)
                continue
            self.rows[token] = row
        return unknown

    def _split(self, text: str, pieces: str) -> list[int]:
        """The rows of a text's pieces; one unless the request asks for their mean. A static
        embedding model's text is its embedding: the pieces it pools, however many."""
        table = self.served.table
        if table.static is not None:
            ids = split_texts(table, [text])[0]
        else:
            split = self.served.text.split(text)
            self.matched.update(split.matched)
            ids = split.ids
        tokens = [table.tokens[row] for row in ids]
        if not tokens:
            raise EmptyText(self.served.name)
        if len(tokens) > 1 and pieces != "mean" and table.static is None:
            raise SeveralPieces(text, tokens, split.ids, self.served.name)
        if len(tokens) > 1:
            self.matched[text] = tokens
        elif tokens[0] != text:
            self.matched[text] = tokens[0]
        return list(ids)

    def row(self, token: str) -> int:
        """The row of an already resolved token."""
        return self.rows[token]

    def row_array(self, tokens: Sequence[str]) -> np.ndarray:
        """Rows of already resolved tokens, as an int64 array."""
        return np.fromiter((self.rows[t] for t in tokens), dtype=np.int64, count=len(tokens))

    def key_row(self, key: Key) -> int | None:
        """The row a token or a one-piece text stands for; None for a mean of pieces, or a
        static embedding model's text (its embedding)."""
        if isinstance(key, str):
            return self.rows[key]
        rows = self.text_rows(key.text, key.pieces)
        return rows[0] if len(rows) == 1 and self.served.table.static is None else None

    def text_rows(self, text: str, pieces: str) -> list[int]:
        """The rows of an already split text's pieces."""
        return self.texts[(text, pieces)]

    def mean(self, rows: Sequence[int]) -> np.ndarray:
        """The mean of raw rows, as float64; a static embedding model's embedding of them."""
        table = self.served.table
        if table.static is not None:
            return pool(table, [rows])[0].astype(np.float64)
        return mean_row(table.vectors, rows)

    def raw_vector(self, key: Key) -> np.ndarray:
        """A key's raw row, or the mean of its pieces' raw rows (float64)."""
        row = self.key_row(key)
        if row is not None:
            return self.served.table.vectors[row].astype(np.float64)
        assert isinstance(key, TextKey)
        return self.mean(self.text_rows(key.text, key.pieces))

    def directions(self, keys: Sequence[Key]) -> np.ndarray:
        """Unit float64 directions of resolved keys: rows at once, means one by one."""
        store = self.served.search.store
        rows = [self.key_row(key) for key in keys]
        found = [i for i, row in enumerate(rows) if row is not None]
        directions = np.empty((len(keys), store.width))
        directions[found] = store.directions(np.asarray([rows[i] for i in found], np.int64))
        for i, key in enumerate(keys):
            if rows[i] is None:
                directions[i] = store.direction(self.raw_vector(key), _mean_of(key))
        return directions

    def exclusions(self, tokens: Sequence[str]) -> frozenset[int]:
        """Rows of the extra exclusions (their number checked before validation)."""
        return frozenset(self.rows[t] for t in tokens)

    def neighbor_query(
        self, request: NeighborsRequest, among: Among | None = None
    ) -> NeighborQuery:
        """A neighbour query (among a candidate set, if given); a token, id or text query
        excludes its own rows."""
        exclude = self.exclusions(request.exclude)
        vector, own, row = self.query_source(request)
        return NeighborQuery(
            vector,
            self.limits.checked_k(request.k),
            exclude | own,
            request.restrict,
            options=self.search_options(request),
            row=row,
            among=among,
        )

    def query_source(self, request: QuerySource) -> tuple[np.ndarray, frozenset[int], int | None]:
        """A query's vector, the rows it stands for, and its row when it is one table row."""
        if request.vector is not None or request.vector_b64 is not None:
            return vector_of(request.vector, request.vector_b64), frozenset(), None
        if request.text is not None:
            rows = self.text_rows(request.text, request.pieces)
            if len(rows) > 1 or self.served.table.static is not None:
                return self.mean(rows), frozenset(rows), None
        row = self._query_row(request)
        return self.served.table.vectors[row], frozenset([row]), row

    def search_options(self, request: SearchFields) -> SearchOptions:
        """The request's exact / ef_search / nprobe / k_factor / probe_margin, checked against
        the table's index."""
        options = SearchOptions(
            request.exact, request.ef_search, request.nprobe, request.k_factor, request.probe_margin
        )
        if options == DEFAULT_SEARCH:
            return DEFAULT_SEARCH
        check_options(self.served.indexing.parameters, options)
        return options

    def _query_row(self, request: QuerySource) -> int:
        if request.token is not None:
            return self.row(request.token)
        if request.text is not None:
            return self.text_rows(request.text, request.pieces)[0]
        assert request.id is not None
        return int(self.served.table.check_ids([request.id])[0])  # UnknownId outside the rows

    def analogy_query(self, request: AnalogyRequest) -> AnalogyQuery:
        """An analogy query; its input tokens and texts' pieces are excluded from the answer."""
        terms = self.analogy_terms(request)
        return replace(
            terms,
            k=self.limits.checked_k(request.k),
            exclude=self.exclusions(request.exclude) | terms.exclude,
            restrict=request.restrict,
            options=self.search_options(request),
        )

    def analogy_terms(self, request: AnalogyTerms) -> AnalogyQuery:
        """The analogy of a request's terms (k=1, nothing excluded but the texts' pieces),
        within max_terms: a mean text's pieces count one each."""
        terms = [*request.positive, *request.negative]
        self.limits.check_terms(sum(len(self._term_rows(term)) or 1 for term in terms))
        return AnalogyQuery(
            positive=tuple(self._term(t) for t in request.positive),
            negative=tuple(self._term(t) for t in request.negative),
            k=1,
            method=request.method,
            exclude=frozenset(row for term in terms for row in self._term_rows(term)),
            vector_terms=request.vector_terms,
        )

    def _term_rows(self, term: RequestTerm) -> list[int]:
        """The pieces of a text term (each counts as a term), else none."""
        if isinstance(term, str) or term.text is None:
            return []
        return self.text_rows(term.text, term.pieces)

    def _term(self, term: RequestTerm) -> Term:
        if isinstance(term, str):
            return Term(row=self.row(term))
        if term.token is not None:
            return Term(row=self.row(term.token), weight=term.weight)
        if term.text is not None:
            key = TextKey(text=term.text, pieces=term.pieces)
            row = self.key_row(key)
            if row is not None:
                return Term(row=row, weight=term.weight)
            # Unit length (made by the engine), so the mean weighs as a table row does in 3CosAdd.
            return Term(
                vector=self.raw_vector(key), weight=term.weight, unit=True, what=_mean_of(key)
            )
        return Term(vector=vector_of(term.vector, term.vector_b64), weight=term.weight)


async def resolved(
    context: Context, resolver: Resolver, tokens: Iterable[str], texts: Iterable[TextName] = ()
) -> Resolver:
    """resolver.resolve, on a worker thread when there are texts: splitting takes about
    0.75 us a character, which the event loop should not spend."""
    tokens, texts = list(tokens), list(texts)
    if not texts:
        return resolver.resolve(tokens)
    return await context.runtime.in_thread(resolver.resolve, tokens, texts)


def _mean_of(key: Key) -> str:
    text = key if isinstance(key, str) else key.text
    return f"the mean of the pieces of {text[:80]!r}"


def tokens_of(request: NeighborsRequest | AnalogyRequest) -> list[str]:
    """Every token a neighbour or analogy request names."""
    if isinstance(request, NeighborsRequest):
        named: list[str | None] = [request.token]
    else:
        terms = [*request.positive, *request.negative]
        named = [t if isinstance(t, str) else t.token for t in terms]
    return [t for t in named if t is not None] + list(request.exclude)


def texts_of(request: NeighborsRequest | AnalogyRequest) -> list[TextName]:
    """Every text a neighbour or analogy request names, with how its pieces are used."""
    if isinstance(request, NeighborsRequest):
        return [] if request.text is None else [(request.text, request.pieces)]
    terms = [*request.positive, *request.negative]
    return [(t.text, t.pieces) for t in terms if not isinstance(t, str) and t.text is not None]


def split_keys(keys: Iterable[Key]) -> tuple[list[str], list[TextName]]:
    """The tokens and the texts among keys."""
    keys = list(keys)
    tokens = [key for key in keys if isinstance(key, str)]
    texts: list[TextName] = [(key.text, key.pieces) for key in keys if not isinstance(key, str)]
    return tokens, texts


def label(key: Key) -> str:
    """How an answer names a key: the token, or the text."""
    return key if isinstance(key, str) else key.text


def vector_of(floats: list[float] | None, encoded: str | None) -> np.ndarray:
    """A request's vector, given as JSON floats or as base64 of little-endian float32s."""
    if floats is not None:
        return np.asarray(floats, dtype=np.float64)
    assert encoded is not None
    # The schema's pattern admits only base64 of whole float32s; check what it cannot state.
    values = np.frombuffer(base64.b64decode(encoded), dtype="<f4")
    bad = ~(np.abs(values) <= MAX_COMPONENT)  # NaN compares False: caught here too
    if bad.any():
        index = int(np.argmax(bad))
        raise InvalidVector(index, float(values[index]), MAX_COMPONENT)
    return values.astype(np.float64)
