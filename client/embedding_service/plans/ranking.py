"""Plans of /cosines (every row's score, a page at a time) and /rank (rows closer than others)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from embedding_service.decoding import decode, decode_vector
from embedding_service.models.ranking import Cosines, Rank, Ranks
from embedding_service.models.search import Analogy, Query
from embedding_service.plans import Answer, Plan, batched, body, merged_matched, one_call, post
from embedding_service.plans import keys as wire


def cosines(
    table: str,
    query: Query | Analogy,
    *,
    method: Literal["add", "mul"] | None = None,
    offset: int = 0,
    limit: int | None = None,
    checkpoint: int | None = None,
    vector_terms: Literal["unit", "as_given"] | None = None,
) -> Plan[Cosines]:
    """Every row's score from `offset` (at most `limit` rows, else as many as the server
    allows): the cosine with a token, id, vector or Text, or an Analogy's score (method "add",
    3CosAdd, or "mul", 3CosMul, its raw vectors as `vector_terms` says); float32, NaN for a
    zero row."""
    if isinstance(query, Analogy):
        if query.exclude:
            raise TypeError("cosines scores every row: an Analogy's exclude has no place here")
        source = {"positive": wire.terms(query.positive), "negative": wire.terms(query.negative)}
        source.update(body(method=method, vector_terms=vector_terms))
    elif method is not None or vector_terms is not None:
        raise TypeError("method is an Analogy's: cosines(table, Analogy([...], [...]), method=)")
    else:
        source = wire.query(query)
    page = body(offset=offset or None, limit=limit, checkpoint=checkpoint)
    call = post(table, "cosines", {**source, **page})
    return one_call(call, _cosines)


def _cosines(answer: Answer) -> Cosines:
    return Cosines(
        rows=answer["rows"],
        offset=answer["offset"],
        scores=decode_vector(answer["scores_b64"]),
        matched=answer.get("matched") or {},
    )


def rank(
    table: str,
    key: str | int,
    others: str | Sequence[str],
    *,
    closer_rows: bool = False,
    offset: int = 0,
    limit: int | None = None,
    checkpoint: int | None = None,
) -> Plan[Ranks]:
    """How many rows are closer to `key` (a token or a row id) than each of `others` is (in
    chunks of the server's max_batch); with closer_rows=True, for one other, which rows, a page
    (`offset`, `limit`) in row order."""
    source: dict[str, Any] = {"token": key} if isinstance(key, str) else {"id": int(key)}
    items = [others] if isinstance(others, str) else list(others)
    options = {**source, **body(checkpoint=checkpoint)}
    if closer_rows:
        page = {"closer_rows": body(offset=offset or None, limit=limit)}
        return one_call(post(table, "rank", {**options, "others": items, **page}), _ranks_of)

    return batched(post(table, "rank", options), "others", items, _ranks)


def _ranks_of(answer: Answer) -> Ranks:
    return decode(Ranks, answer)


def _ranks(answers: list[Answer]) -> Ranks:
    ranked = [decode(Rank, item) for answer in answers for item in answer["ranks"]]
    first = answers[0]
    return Ranks(first["token"], first["id"], ranked, matched=merged_matched(answers))
