"""Requests one field apart: for every field of every body the answer cache may hold (the JSON
Schemas of the cacheable operations' bodies name them), two valid requests that differ in that
field alone, and the table on which their answers differ.

A cache key that left a field out would answer one request of its pair with the other's answer
(tests/runtime/test_cache.py); each side has its own key (tests/operations/test_door.py). A
field the schemas gain has no pair until one is written here, and both tests fail until then.

The tables: minilm and run of tests/conftest.py, and two with approximate indexes
(`write_indexed`) on which the index's per-query options change answers.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from service.config import TableSpec
from service.operations.catalog import OPERATIONS, never

Body = dict[str, Any]
Apart = tuple[Body, Body]

# Rows of the indexed tables: random directions in 16 dimensions, where an HNSW graph of 4 links
# a node and an IVF of 4-bit codes miss true neighbours often enough to be told apart.
INDEXED_ROWS, INDEXED_WIDTH = 5000, 16
INDEXED = ("hnsw", "fastscan")
# Tokens of the indexed tables tried in turn: which of them an option changes the answer of
# depends on the index built.
TRIED = range(0, 4000, 199)


@dataclass(frozen=True)
class Pair:
    """Requests to `operation` on `table` one field apart; on an indexed table, one candidate
    pair per token tried, of which the first whose answers differ tells the field apart."""

    table: str
    operation: str
    candidates: tuple[Apart, ...]


def cached_fields() -> list[tuple[str, str, str]]:
    """(operation, model, field) for every property of every model in the JSON Schema of the
    body of each operation whose answers may be cached."""
    found = []
    for operation in OPERATIONS.values():
        if operation.cacheable is never:
            continue
        schema = operation.body.json_schema()
        models = {**schema.get("$defs", {}), schema.get("title", ""): schema}
        for model, definition in models.items():
            found += [(operation.name, model, name) for name in definition.get("properties", {})]
    return sorted(found)


def _vector(seed: int) -> list[float]:
    return np.random.default_rng(seed).normal(size=384).tolist()


def _base64(vector: list[float]) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode()


VECTOR, OTHER = _vector(1), _vector(2)

# A neighbour query's source, each pair in place of the base query's token.
SOURCES: dict[str, Apart] = {
    "token": ({"token": "king"}, {"token": "queen"}),
    "id": ({"id": 2000}, {"id": 2001}),
    "vector": ({"vector": VECTOR}, {"vector": OTHER}),
    "vector_b64": ({"vector_b64": _base64(VECTOR)}, {"vector_b64": _base64(OTHER)}),
    "text": ({"text": "king"}, {"text": "queen"}),
    # Several pieces: their mean, or 422 (SeveralPieces), which is never cached.
    "pieces": ({"text": "embeddings", "pieces": "mean"}, {"text": "embeddings", "pieces": "one"}),
}
# What a neighbour query and an analogy ask of the search, added to a base query of the table.
SEARCH: dict[str, tuple[str, Body, Body]] = {
    "k": ("minilm", {"k": 3}, {"k": 4}),
    "exclude": ("minilm", {"exclude": ["queen"]}, {"exclude": ["kings"]}),
    "restrict": ("minilm", {"restrict": 30_000}, {"restrict": 5_000}),
    "exact": ("fastscan", {"exact": False}, {"exact": True}),
    "ef_search": ("hnsw", {"ef_search": 1}, {"ef_search": 1024}),
    "nprobe": ("fastscan", {"nprobe": 1}, {"nprobe": 64}),
    "k_factor": ("fastscan", {"k_factor": 1}, {"k_factor": 32}),
    "probe_margin": ("fastscan", {"probe_margin": 0.0}, {"probe_margin": 2.0}),
}
# An analogy's terms and how they combine, in place of the base analogy's.
TERMS: dict[str, Apart] = {
    "positive": ({"positive": ["king", "woman"]}, {"positive": ["king", "girl"]}),
    "negative": ({"negative": ["man"]}, {"negative": ["boy"]}),
    "method": ({"method": "add"}, {"method": "mul"}),
    "vector_terms": (
        {"positive": [{"vector": VECTOR}, "woman"], "method": "mul", "vector_terms": "unit"},
        {"positive": [{"vector": VECTOR}, "woman"], "method": "mul", "vector_terms": "as_given"},
    ),
}
# One weighted term, the first positive of the base analogy.
TERM: dict[str, Apart] = {
    **{name: SOURCES[name] for name in ("token", "vector", "vector_b64", "text", "pieces")},
    "weight": ({"token": "king", "weight": 1.0}, {"token": "king", "weight": 3.0}),
}
# What a request names once for all its queries, with the table it is told apart on.
REQUEST: dict[str, tuple[str, Body, Body]] = {
    "checkpoint": ("run", {"checkpoint": 0}, {"checkpoint": 2}),
    "among": ("minilm", {"among": list(range(1000, 3000))}, {"among": list(range(1000, 6000))}),
}


def neighbor_base(table: str, token: int = 0) -> Body:
    """A neighbour query of `table` (of its token w{token} on an indexed table)."""
    return {
        "minilm": {"token": "king", "k": 3},
        "run": {"token": "w3", "k": 3},
    }.get(table, {"token": f"w{token}", "k": 10})


def analogy_base(table: str, token: int = 0) -> Body:
    """An analogy of `table` (from its tokens w{token}... on an indexed table)."""
    if table == "minilm":
        return {"positive": ["king", "woman"], "negative": ["man"], "k": 3}
    if table == "run":
        return {"positive": ["w3", "w4"], "negative": ["w5"], "k": 3}
    return {"positive": [f"w{token}", f"w{token + 1}"], "negative": [f"w{token + 2}"], "k": 10}


def pair_of(operation: str, model: str, field: str) -> Pair:
    """The pair that tells `field` of `model` apart; KeyError for a field with no pair yet."""
    if field == "queries":
        base = neighbor_base if operation == "neighbors" else analogy_base
        first, second = base("minilm"), {**base("minilm"), "k": 5}
        return Pair("minilm", operation, (({field: [first, second]}, {field: [second, first]}),))
    if field in REQUEST:
        table, one, other = REQUEST[field]
        return _placed(table, operation, model.endswith("BatchRequest"), _adding(one, other))
    if model == "WeightedTerm":
        first, second = analogy_base("minilm"), analogy_base("minilm")
        first["positive"], second["positive"] = [TERM[field][0], "woman"], [TERM[field][1], "woman"]
        return Pair("minilm", operation, ((first, second),))
    inner = model in ("NeighborsRequest", "AnalogyRequest")  # a query of a batch
    if field in SEARCH:
        table, one, other = SEARCH[field]
        return _placed(table, operation, inner, _adding(one, other))
    if operation == "neighbors":
        return _placed("minilm", operation, inner, _sourcing(*SOURCES[field]))
    return _placed("minilm", operation, inner, _adding(*TERMS[field]))


def _adding(one: Body, other: Body) -> Callable[[Body], Apart]:
    """The base query with each side's fields added (or in place of the base's)."""
    return lambda base: ({**base, **one}, {**base, **other})


def _sourcing(one: Body, other: Body) -> Callable[[Body], Apart]:
    """The base neighbour query with each side's source in place of its token."""

    def apart(base: Body) -> Apart:
        rest = {name: value for name, value in base.items() if name != "token"}
        return {**one, **rest}, {**other, **rest}

    return apart


def _placed(table: str, operation: str, in_batch: bool, apart: Callable[[Body], Apart]) -> Pair:
    """`apart(base)` of each base query of `table`, as one query or as a batch of one."""
    base = neighbor_base if operation == "neighbors" else analogy_base
    tokens = TRIED if table in INDEXED else range(1)
    candidates = []
    for token in tokens:
        first, second = apart(base(table, token))
        if in_batch:  # the batch-wide fields (checkpoint, among) stay outside its query
            first, second = _batched(first), _batched(second)
        candidates.append((first, second))
    return Pair(table, operation, tuple(candidates))


def _batched(query: Body) -> Body:
    outside = {name: query.pop(name) for name in list(query) if name in REQUEST}
    return {"queries": [query], **outside}


def write_indexed(folder: Path) -> list[TableSpec]:
    """The indexed tables `hnsw` and `fastscan` (one file of random rows, tokens w0...)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = np.random.default_rng(0).normal(size=(INDEXED_ROWS, INDEXED_WIDTH))
    np.save(folder / "random.npy", rows.astype(np.float32))
    (folder / "random.vocab").write_text("".join(f"w{i}\n" for i in range(INDEXED_ROWS)))
    files = {"path": folder / "random.npy", "vocab": folder / "random.vocab"}
    return [
        TableSpec(name="hnsw", index="hnsw", hnsw_m=4, **files),
        TableSpec(name="fastscan", index="fastscan", **files),
    ]
