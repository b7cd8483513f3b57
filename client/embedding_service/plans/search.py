"""Neighbour and analogy plans: one query, or a batch sent in chunks, results in order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, TypedDict, Unpack, overload

from embedding_service.decoding import decode, decode_list
from embedding_service.models.search import Analogy, Neighbor, Neighbors, Query, Term
from embedding_service.plans import Answer, Plan, batched, body, merged_matched, one_call, post
from embedding_service.plans import keys as wire


class SearchOptions(TypedDict, total=False):
    """What a neighbour or analogy query may add (a batch applies them to every query).

    exclude: more tokens to leave out; restrict: search only the first N rows (gensim's
    restrict_vocab); exact: the exhaustive path even on a table with an approximate index;
    ef_search / nprobe: an HNSW / IVF index's effort; probe_margin: an IVF index skips the
    lists of the nprobe nearest whose centroid is more than this cosine below the nearest's;
    k_factor: an IVF-PQ or fast-scan index's candidates per result, rescored exactly;
    checkpoint: which version of the rows.
    """

    exclude: Sequence[str]
    restrict: int | None
    exact: bool
    ef_search: int | None
    nprobe: int | None
    probe_margin: float | None
    k_factor: int | None
    checkpoint: int | None


class NeighborsOptions(SearchOptions, total=False):
    """A neighbour query's options: `among`, row ids to search among (each query's exact top k
    among exactly those rows, whatever index the table has; a batch sends the set once per
    request; not with restrict)."""

    among: Sequence[int] | None


class AnalogyOptions(SearchOptions, total=False):
    """An analogy's options: `method` "add" (3CosAdd, the default) or "mul" (3CosMul);
    `vector_terms` how 3CosMul scores a raw vector: "unit" (the default) or "as_given" (gensim's
    most_similar_cosmul: its cosines times its norm; no weights then)."""

    method: Literal["add", "mul"]
    vector_terms: Literal["unit", "as_given"]


# A str is a Sequence[str] too; the first overload that matches wins, as at run time.
@overload
def neighbors(  # type: ignore[overload-overlap]
    table: str, query: Query, k: int | None = None, **options: Unpack[NeighborsOptions]
) -> Plan[Neighbors]: ...
@overload
def neighbors(
    table: str, query: Sequence[Query], k: int | None = None, **options: Unpack[NeighborsOptions]
) -> Plan[list[Neighbors]]: ...
def neighbors(
    table: str,
    query: Query | Sequence[Query],
    k: int | None = None,
    **options: Unpack[NeighborsOptions],
) -> Plan[Neighbors] | Plan[list[Neighbors]]:
    """Top-k cosine neighbours of a token, id, vector (1-D) or Text; a list is a batch;
    `among=[ids]`: only among those rows."""
    named = dict(options)
    among = _among(named.pop("among", None))
    checkpoint, shared = _split(k, named)
    once = body(checkpoint=checkpoint, among=among)
    if wire.is_single_query(query):
        single = {**wire.query(query), **shared, **once}  # type: ignore[arg-type]
        return one_call(post(table, "neighbors", single), _one_list)
    queries = [{**wire.query(item), **shared} for item in query]  # type: ignore[union-attr]
    return batched(post(table, "neighbors", once), "queries", queries, _lists)


@overload
def analogy(
    table: str,
    positive: Sequence[Term],
    negative: Sequence[Term] = (),
    k: int | None = None,
    **options: Unpack[AnalogyOptions],
) -> Plan[Neighbors]: ...
# A batch: each Analogy names its own terms, so no separate negative ones.
@overload
def analogy(
    table: str,
    positive: Sequence[Analogy],
    *,
    k: int | None = None,
    **options: Unpack[AnalogyOptions],
) -> Plan[list[Neighbors]]: ...
def analogy(
    table: str,
    positive: Sequence[Term] | Sequence[Analogy],
    negative: Sequence[Term] = (),
    k: int | None = None,
    **options: Unpack[AnalogyOptions],
) -> Plan[Neighbors] | Plan[list[Neighbors]]:
    """positive - negative terms (3CosAdd, or 3CosMul with method="mul"); a list of Analogy
    is a batch.

    A term is a token, a vector, a Text, or (term, weight). In a batch, each Analogy's own
    exclusions add to `exclude`.
    """
    checkpoint, shared = _split(k, dict(options))
    if positive and all(isinstance(item, Analogy) for item in positive):
        if negative:
            raise TypeError("a batch of Analogy queries takes no separate negative terms")
        queries = [_analogy_body(item, shared) for item in positive]  # type: ignore[arg-type]
        once = body(checkpoint=checkpoint)
        return batched(post(table, "analogy", once), "queries", queries, _lists)
    single = _analogy_body(Analogy(positive, negative), shared)  # type: ignore[arg-type]
    return one_call(post(table, "analogy", {**single, **body(checkpoint=checkpoint)}), _one_list)


def _split(k: int | None, options: dict[str, Any]) -> tuple[int | None, dict[str, Any]]:
    """(checkpoint, the fields every query of the request carries)."""
    checkpoint = options.pop("checkpoint", None)
    exclude = options.pop("exclude", ())
    if isinstance(exclude, str):
        raise TypeError("exclude is a list of tokens: exclude=['king'], not exclude='king'")
    if not options.get("exact", True):
        options.pop("exact")
    return checkpoint, body(k=k, exclude=list(exclude) or None, **options)


def _analogy_body(query: Analogy, shared: dict[str, Any]) -> dict[str, Any]:
    exclude = [*shared.get("exclude", ()), *query.exclude]
    terms = {"positive": wire.terms(query.positive), "negative": wire.terms(query.negative)}
    return {**shared, **terms, **body(exclude=exclude or None)}


def _among(ids: Any) -> list[int] | None:
    """Row ids as the JSON integers the server takes (a numpy array's too)."""
    if ids is None:
        return None
    if isinstance(ids, str | bytes) or not hasattr(ids, "__iter__"):
        raise TypeError("among is a list of row ids: among=[1, 2, 3]")
    return [int(i) for i in ids]


def _one_list(answer: Answer) -> Neighbors:
    return decode(Neighbors, answer)


def _lists(answers: list[Answer]) -> list[Neighbors]:
    matched = merged_matched(answers)
    return [
        Neighbors(decode_list(Neighbor, result["neighbors"]), matched=matched)
        for answer in answers
        for result in answer["results"]
    ]
