"""gensim's most_similar arguments read as gensim reads them (single keys, vectors, weights)
and put as the service takes them (terms, restrict, its KeyError)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from embedding_service.models.search import Term

# What gensim takes as a key (a row number counts), and as a key or a vector.
KEY_TYPES = (str, int, np.integer)
TERM_TYPES = (str, int, np.integer, np.ndarray)


@dataclass(frozen=True)
class Weighted:
    """A key (str or row number) or a vector, with gensim's weight for it."""

    term: Any
    weight: float


def ensure_list(value: Any) -> list[Any]:
    """gensim's _ensure_list: None -> [], one key or 1-D vector -> [it], a matrix -> its rows."""
    if value is None:
        return []
    if isinstance(value, KEY_TYPES) or (isinstance(value, np.ndarray) and value.ndim == 1):
        return [value]
    if isinstance(value, np.ndarray) and value.ndim == 2:
        return list(value)
    return list(value)


def weighted_terms(positive: list[Any], negative: list[Any]) -> list[Weighted]:
    """Each term with its weight: 1.0 positive, -1.0 negative, unless given as (term, weight).

    As in gensim, a weight given in a tuple replaces the default sign too: (key, 0.5) among the
    negative terms counts positively.
    """
    terms = []
    for index, item in enumerate(positive + negative):
        default = 1.0 if index < len(positive) else -1.0
        if isinstance(item, TERM_TYPES):
            terms.append(Weighted(item, default))
        else:
            terms.append(Weighted(item[0], float(item[1])))
    return terms


def restrict_of(
    clip_start: int, clip_end: int | None, restrict_vocab: int | None, rows: int
) -> int | None:
    """gensim's clip range as the service's restrict (which always starts at row 0)."""
    if restrict_vocab:
        return restrict_vocab
    if clip_start:
        raise NotImplementedError("clip_start > 0: the service searches the first N rows only")
    return clip_end if clip_end and clip_end < rows else None


def clip_range(
    clip_start: int, clip_end: int | None, restrict_vocab: int | None, rows: int
) -> tuple[int, int]:
    """The rows gensim's most_similar(topn=None) scores, rows[clip_start:clip_end] (or the
    first restrict_vocab), as (start, stop)."""
    start, stop = (0, restrict_vocab) if restrict_vocab else (clip_start, clip_end or rows)
    start, stop, _ = slice(start, stop).indices(rows)
    return start, max(start, stop)


def service_term(term: Any, weight: float) -> Term:
    """A term as the service takes it: a weight of 1 is left out, so a query of plain tokens
    is one the server may answer from its cache."""
    return term if weight == 1 else (term, weight)


def first_unknown(unknown: list[str], terms: list[Weighted]) -> KeyError:
    """gensim's KeyError for the first unknown key, in the order the terms were given."""
    missing = set(unknown)
    first = next(
        (t.term for t in terms if isinstance(t.term, str) and t.term in missing), unknown[0]
    )
    return KeyError(f"Key '{first}' not present in vocabulary")
