"""How tokens, ids, vectors, texts and weighted terms go over the wire."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from embedding_service.decoding import encode_vector
from embedding_service.models.search import Query, Term, Text


def key(value: str | Text) -> str | dict[str, str]:
    """A token as itself, a text as {"text", "pieces"}."""
    if isinstance(value, Text):
        return {"text": value.text, "pieces": value.pieces}
    if isinstance(value, str):
        return value
    raise TypeError(f"a key is a token (str) or a Text, not {type(value).__name__}")


def keys(values: str | Text | Sequence[str | Text]) -> list[str | dict[str, str]]:
    """A list of keys; one token or text alone is a list of one."""
    if isinstance(values, str | Text):
        return [key(values)]
    return [key(value) for value in values]


def query(value: Query) -> dict[str, Any]:
    """A neighbour query's source: {"token"}, {"id"}, {"vector_b64"} or {"text", "pieces"}."""
    if isinstance(value, Text):
        return {"text": value.text, "pieces": value.pieces}
    if isinstance(value, str):
        return {"token": value}
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        return {"id": int(value)}
    if isinstance(value, np.ndarray):
        return {"vector_b64": encode_vector(value)}
    raise TypeError(f"a query is a token, an id, a vector or a Text, not {type(value).__name__}")


def is_single_query(value: object) -> bool:
    """Whether `value` is one query rather than a list of them."""
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            raise ValueError(
                f"a vector query is one-dimensional (got shape {value.shape}); "
                "send a batch of vectors as a list, e.g. list(matrix)"
            )
        return True
    return isinstance(value, str | int | np.integer | Text)


def term(value: Term) -> str | dict[str, Any]:
    """An analogy term: a token as itself, else an object with its source (and weight)."""
    if isinstance(value, tuple):
        item, weight = value
        source = term(item)
        source = {"token": source} if isinstance(source, str) else source
        return {**source, "weight": float(weight)}
    if isinstance(value, str):
        return value
    if isinstance(value, Text):
        return {"text": value.text, "pieces": value.pieces}
    if isinstance(value, np.ndarray):
        return {"vector_b64": encode_vector(value)}
    raise TypeError(f"a term is a token, a vector, a Text or (term, weight), not {value!r}")


def terms(values: Sequence[Term]) -> list[str | dict[str, Any]]:
    """Analogy terms, in order."""
    if isinstance(values, str | Text | np.ndarray):
        raise TypeError("terms are a list: positive=['king', 'woman'], not positive='king'")
    return [term(value) for value in values]
