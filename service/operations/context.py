"""What an operation answers a query with besides its body: the Context (the query's table,
limits and runtime), the Limits it stays within, the Resolver that turns the query's tokens,
ids, texts and vectors into rows of that table and into engine queries, and the pieces several
operations write their answers with (a neighbour list, readable tokens, a row's vector).

Limits: the configured limits of a request (settings), checked as a request is resolved. Hard
ceilings that no setting can lift live in service/schemas/; these are the tunable ones.

Resolution: every token and text of a request is resolved in one pass, so a 404 names all
unknown tokens (and unknown words of texts) at once.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import orjson

from service.config import Settings
from service.engine.errors import (
    EmptyText,
    InvalidVector,
    LimitExceeded,
    SeveralPieces,
    UnknownToken,
)
from service.engine.search.approximate import check_options
from service.engine.search.queries import (
    DEFAULT_SEARCH,
    Among,
    AnalogyQuery,
    NeighborQuery,
    Neighbors,
    SearchOptions,
    Term,
)
from service.engine.served import ServedTable
from service.engine.tables.embedding import pool, split_texts
from service.engine.tables.pieces import PLAIN, readable
from service.engine.tables.table import EmbeddingTable
from service.engine.tables.text import mean_row
from service.loading.registry import Registry
from service.operations.hints import hint_for
from service.runtime.runtime import Runtime
from service.schemas.common import MAX_COMPONENT, Key, TextKey
from service.schemas.search import (
    AnalogyRequest,
    AnalogyTerms,
    NeighborsRequest,
    QuerySource,
    RequestTerm,
    SearchFields,
)


@dataclass(frozen=True)
class Context:
    """One query's table (resolved once, from the path), limits, batchers and cache."""

    served: ServedTable
    limits: Limits
    runtime: Runtime
    # Every served table, for queries that compare the path's table with another (drift).
    tables: Registry | None = None

    async def at_checkpoint(self, checkpoint: int) -> Context:
        """This context with the table as it was at `checkpoint` (UnknownCheckpoint if it has
        none such). A view not kept is built as an analysis (runtime/analyses.py)."""
        served = self.served
        if served.versions.check(checkpoint) == served.versions.last:
            return self
        view = served.views.kept(checkpoint)
        if view is None:
            keep = self.limits.settings.checkpoint_views
            view = await self.runtime.analyses.run(served.at, checkpoint, keep)
        return replace(self, served=view)


# Suspects in a /diagnostics answer that gives no limit (lowered to max_diagnostics_limit).
DEFAULT_SUSPECTS = 100


class Limits:
    """The request limits of `settings`, each read under its setting's own name; every check
    raises LimitExceeded (422) when a request asks for more."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def checked_k(self, k: int | None) -> int:
        """The request's k, or the default when it gives none."""
        return within("k", self.settings.default_k if k is None else k, self.settings.max_k)

    def check_batch(self, size: int) -> None:
        """Queries in a batch, or tokens/ids/pairs in one request."""
        within("batch size", size, self.settings.max_batch)

    def check_terms(self, count: int) -> None:
        """Positive + negative terms of one analogy."""
        within("analogy terms", count, self.settings.max_terms)

    def check_exclusions(self, count: int) -> None:
        """Extra exclusions of one query."""
        within("exclusions", count, self.settings.max_exclude)

    def check_among(self, count: int) -> None:
        """Rows of one request's candidate set (`among`)."""
        within("candidate rows (among)", count, self.settings.max_among)

    def check_results(self, count: int) -> None:
        """Results of one request: k summed over its queries (the answer's size)."""
        within("results (k summed over the queries)", count, self.settings.max_results)

    def check_directions(self, count: int) -> None:
        """Directions one request scores against every row: a neighbour or 3CosAdd query is
        one, a 3CosMul query one per term."""
        within(
            "query directions (a 3CosMul query counts one per term)",
            count,
            self.settings.max_directions,
        )

    def cosine_rows(self, limit: int | None, available: int, directions: int) -> int:
        """Rows of one /cosines answer: the request's limit, or as many as max_cosine_rows
        allows, at most the rows `available`; rows times directions within the setting."""
        most = self.settings.max_cosine_rows
        rows = min(available, max(1, most // directions) if limit is None else limit)
        within("cosine rows (rows x directions; 3CosMul counts one per term)",
               rows * directions, most)  # fmt: skip
        return rows

    def closer_rows(self, limit: int | None) -> int:
        """Closer rows listed by one /rank answer: the request's, or max_results."""
        most = self.settings.max_results
        return most if limit is None else within("closer rows listed", limit, most)

    def check_projection_points(self, points: int) -> None:
        """Points of one /projection request (the answer is ~75 bytes a point)."""
        within("projection points", points, self.settings.max_projection_points)

    def suspects_page(self, limit: int | None) -> int:
        """Suspects listed in one /diagnostics answer: the request's, or the default."""
        if limit is None:
            return min(DEFAULT_SUSPECTS, self.settings.max_diagnostics_limit)
        return within("diagnostics limit", limit, self.settings.max_diagnostics_limit)

    def check_questions(self, count: int) -> None:
        """Analogy questions or word pairs of one /evaluate request."""
        within("evaluation questions", count, self.settings.max_evaluation_questions)

    def check_listed_bytes(self, size: int) -> None:
        """Bytes of an /evaluate answer that lists its questions: at most a body's."""
        within(
            "bytes of an answer listing its questions (max_body_bytes)",
            size,
            self.settings.max_body_bytes,
        )

    def check_text_length(self, characters: int) -> None:
        """Characters of text in one request, summed over its distinct texts."""
        within(
            "text length (characters, summed over the request's texts)",
            characters,
            self.settings.max_text_length,
        )

    def check_piece_vectors(self, count: int) -> None:
        """Pieces answered with their rows (include_vector): as many as a lookup may have."""
        within("pieces with vectors", count, self.settings.max_batch)

    def check_detokenize(self, count: int) -> None:
        """Ids of one detokenize: as many as the pieces of the longest text allowed."""
        within("ids to detokenize", count, self.settings.max_text_length)

    def check_trajectory(self, rows: int, checkpoints: int) -> None:
        """Rows one /trajectory follows, and rows x checkpoints in its answer."""
        within("trajectory points", rows, self.settings.max_trajectory_points)
        within(
            "trajectory values (rows x checkpoints)",
            rows * checkpoints,
            self.settings.max_trajectory_values,
        )

    def check_drift(self, limit: int, tokens: int) -> None:
        """Rows listed by one /drift (each way), and tokens whose neighbours it compares."""
        within("drift limit", limit, self.settings.max_drift_limit)
        within("drift tokens", tokens, self.settings.max_drift_tokens)

    def check_matrix(self, size: int) -> None:
        """Tokens of one similarity matrix (the answer is size x size)."""
        within("similarity matrix tokens", size, self.settings.max_matrix_tokens)


def within(what: str, value: int, limit: int) -> int:
    """`value`, or LimitExceeded naming `what` when it is above `limit`."""
    if value > limit:
        raise LimitExceeded(what, limit, value)
    return value


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


# Writing answers: what several operations put into theirs (each operation writes its own
# answer with these, serialised once with orjson, in the shape of the response models its route
# declares; tests validate them against the models).


def dumps(payload: Any) -> bytes:
    """Serialise a response payload."""
    return orjson.dumps(payload)


def neighbor_list(table: EmbeddingTable, result: Neighbors) -> list[dict[str, Any]]:
    """[{"token", "id", "score"}, ...] for one engine result (a model's tokens readable too)."""
    tokens = table.vocabulary.take(result.ids)  # one gather of the packed tokens
    answer = [
        {"token": token, "id": row, "score": score}
        for token, row, score in zip(
            tokens, result.ids.tolist(), result.scores.tolist(), strict=True
        )
    ]
    add_readable(table, answer)
    return answer


def add_readable(table: EmbeddingTable, items: list[dict[str, Any]]) -> None:
    """Put each item's token as the text it stands for beside it ("text", and "incomplete"
    for part of a character), when the table is a byte-level or SentencePiece model's."""
    style = None if table.model is None else table.model.pieces
    if style is None or style == PLAIN:
        return
    for item in items:
        text, incomplete = readable(item["token"], style)
        item["text"] = text
        if incomplete:
            item["incomplete"] = True


def add_vector(item: dict[str, Any], vector: np.ndarray, encoding: str | None) -> None:
    """Put a row into an answer item as "vector" (floats) or "vector_b64"; None: neither."""
    if encoding == "float":
        item["vector"] = vector.astype(np.float32).tolist()
    elif encoding == "base64":
        item["vector_b64"] = base64.b64encode(vector.astype("<f4").tobytes()).decode()


# Query -> stored token (case fallback, one-piece texts), or a text -> its pieces.
Matched = dict[str, str | list[str]]
