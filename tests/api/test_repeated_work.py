"""Work done once on the request path, for a token query, a vector query, an analogy, a batch
and an answer from the cache: one parse and one validation of the body, one walk of its queries
for each purpose, each vector normalised once, each limit checked once (the real app's functions
that do the work wrapped with counters), and one trip into the engine for each step: a token's
lookup, a query's plan, the request's search, a list's tokens (calls into service/engine from
the service above it, counted by a profile hook on the app's threads).

Counts, never timings: a second walk or check costs microseconds today and more as it grows.
When work goes away, lower its count here; when it comes back twice, this fails.
"""

from __future__ import annotations

import functools
import os
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import numpy as np
import orjson
import pytest
from fastapi.testclient import TestClient
from pydantic import TypeAdapter

import service
from service.engine.search.store import RowStore
from service.operations import door, limits, search
from service.operations.resolving import Resolver
from tests.conftest import AppOf

VECTOR = np.random.default_rng(3).normal(size=384).tolist()


@dataclass(frozen=True)
class Case:
    """One request, the request sent before it (warming the path, filling the cache or not),
    and what answering it takes."""

    name: str
    operation: str
    body: dict[str, Any]
    warm: dict[str, Any]
    queries: int
    cached: bool  # the answer may be cached (its queries name tokens, ids and texts only)
    normalised: int  # rows and vectors made unit directions
    trips: dict[str, int]  # calls into the engine from the service above it, by function
    checks: dict[str, int] = field(default_factory=dict)  # limit checks, by limit

    @property
    def from_cache(self) -> bool:
        return self.body == self.warm


def once_per_query(
    queries: int, excluding: int = 0, batch: bool = False, **more: int
) -> dict[str, int]:
    """The limit checks of a search request: k of each query, the exclusions of each query
    that lists some, the batch size of a batch (and `more`), then the results and the
    directions of the whole. A list the request does not send bounds nothing: no check."""
    checks = {"k": queries, "results": 1, "query directions": 1, **more}
    if excluding:
        checks["exclusions"] = excluding
    if batch:
        checks["batch size"] = 1
    return checks


def search_trips(queries: int, lookups: int, planned_together: bool = False) -> dict[str, int]:
    """A search request's trips: each distinct token looked up, each query planned (a request's
    analogies together), made an item, and its answer's tokens gathered; one search."""
    if planned_together:
        planning = {"CosineSearch.plan_analogies": 1}
    else:
        planning = {"CosineSearch.plan": queries}
    return {
        **({"Vocabulary.find": lookups} if lookups else {}),
        **planning,
        "SearchItem.of": queries,
        "search_items": 1,
        "PackedStrings.take": queries,
    }


TOKEN = Case(
    "token",
    "neighbors",
    {"token": "queen", "k": 3},
    {"token": "king", "k": 4},
    queries=1,
    cached=True,
    normalised=1,
    trips=search_trips(1, lookups=1),
    checks=once_per_query(1),
)
VECTOR_QUERY = Case(
    "vector",
    "neighbors",
    {"vector": VECTOR, "k": 3},
    {"vector": VECTOR[::-1], "k": 3},
    queries=1,
    cached=False,
    normalised=1,
    trips=search_trips(1, lookups=0),
    checks=once_per_query(1),
)
ANALOGY = Case(
    "analogy",
    "analogy",
    {"positive": ["king", "woman"], "negative": ["man"], "k": 3},
    {"positive": ["paris", "germany"], "negative": ["france"], "k": 3},
    queries=1,
    cached=True,
    normalised=3,
    trips=search_trips(1, lookups=3, planned_together=True),
    checks=once_per_query(1, **{"analogy terms": 1}),
)
# Two token queries (one with an exclusion) and a vector: no cached answer.
BATCH_QUERIES = [
    {"token": "queen", "k": 3},
    {"token": "king", "exclude": ["kings"]},
    {"vector": VECTOR},
]
BATCH = Case(
    "batch",
    "neighbors",
    {"queries": BATCH_QUERIES},
    {"queries": [{"token": "paris", "k": 3}, {"vector": VECTOR[::-1]}]},
    queries=3,
    cached=False,
    normalised=3,
    trips=search_trips(3, lookups=3),
    checks=once_per_query(3, excluding=1, batch=True),
)
FROM_CACHE = Case(
    "token from the cache",
    "neighbors",
    {"token": "queen", "k": 3},
    {"token": "queen", "k": 3},
    queries=1,
    cached=True,
    normalised=0,
    trips={},
)
CASES = [TOKEN, VECTOR_QUERY, ANALOGY, BATCH, FROM_CACHE]


class Tally:
    """What the wrapped functions were asked to do, while `recording`."""

    def __init__(self) -> None:
        self.recording = False
        self.work: Counter[str] = Counter()
        self.checks: Counter[str] = Counter()
        self.inputs: list[np.ndarray] = []  # what was normalised
        self.units: list[np.ndarray] = []  # what normalising gave

    def count(self, piece: str) -> None:
        if self.recording:
            self.work[piece] += 1


def counted(
    monkeypatch: pytest.MonkeyPatch, tally: Tally, owner: Any, name: str, piece: str
) -> None:
    """`owner.name` counting each call as one `piece` of work."""
    real = getattr(owner, name)

    @functools.wraps(real)
    def counting(*args: Any, **kwargs: Any) -> Any:
        tally.count(piece)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting)


def count_the_work(monkeypatch: pytest.MonkeyPatch, tally: Tally) -> None:
    """Wrap the functions that do each piece of a search request's work."""
    for owner, name, piece in [
        (orjson, "loads", "parsed"),
        (door, "check_lengths", "list lengths checked before validation"),
        (door, "check_configured", "list settings checked before validation"),
        (TypeAdapter, "validate_python", "validated"),
        (search, "_names_only", "cache rule asked of a query"),
        (door, "cache_key", "cache key made"),
        (search, "tokens_of", "tokens of a query gathered"),
        (search, "texts_of", "texts of a query gathered"),
        (Resolver, "resolve", "names resolved"),
        (Resolver, "neighbor_query", "neighbour query made"),
        (Resolver, "analogy_query", "analogy made"),
        (search, "neighbors_json", "answer written"),
        (search, "neighbor_list", "neighbour list written"),
    ]:
        counted(monkeypatch, tally, owner, name, piece)
    direction, directions, within = RowStore.direction, RowStore.directions, limits.within

    def one(store: RowStore, vector: np.ndarray, what: str = "the query vector") -> np.ndarray:
        unit = direction(store, vector, what)
        if tally.recording:
            tally.inputs.append(np.asarray(vector, dtype=np.float64).reshape(-1))
            tally.units.append(unit)
        return unit

    def rows(store: RowStore, rows: np.ndarray) -> np.ndarray:
        units = directions(store, rows)
        if tally.recording:
            tally.inputs.extend(store.vectors[np.asarray(rows, dtype=np.int64)].astype(np.float64))
            tally.units.extend(units)
        return units

    def checked(what: str, value: int, limit: int) -> int:
        if tally.recording:
            tally.checks[what.split(" (")[0]] += 1
        return within(what, value, limit)

    monkeypatch.setattr(RowStore, "direction", one)
    monkeypatch.setattr(RowStore, "directions", rows)
    monkeypatch.setattr(limits, "within", checked)


def expected_work(case: Case) -> Counter[str]:
    """One parse, pre-check and validation; the cache rule once a query, the key once when
    it may be cached; on a miss, each query's names, query and list once, the answer once."""
    work = Counter(
        {
            "parsed": 1,
            "list lengths checked before validation": 1,
            "list settings checked before validation": 1,
            "validated": 1,
            "cache rule asked of a query": case.queries,
            "cache key made": int(case.cached),
        }
    )
    if case.from_cache:
        return work
    made = "analogy made" if case.operation == "analogy" else "neighbour query made"
    work.update(
        {
            "tokens of a query gathered": case.queries,
            "texts of a query gathered": case.queries,
            "names resolved": 1,
            made: case.queries,
            "answer written": 1,
            "neighbour list written": case.queries,
        }
    )
    return work


def answer(client: TestClient, case: Case, tally: Tally) -> None:
    """Send the warming request, then the one counted."""
    url = f"/v1/tables/minilm/{case.operation}"
    assert client.post(url, json=case.warm).status_code == 200
    tally.recording = True
    try:
        assert client.post(url, json=case.body).status_code == 200
    finally:
        tally.recording = False


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_each_piece_of_work_is_done_once(
    case: Case, app_of: AppOf, monkeypatch: pytest.MonkeyPatch
) -> None:
    tally = Tally()
    count_the_work(monkeypatch, tally)
    with app_of(diagnostics_at_load=False) as client:
        answer(client, case, tally)
    assert tally.work == expected_work(case)
    # Each vector normalised once: no input twice, and no unit direction normalised again.
    assert len(tally.inputs) == case.normalised
    for i, vector in enumerate(tally.inputs):
        again = [seen for seen in [*tally.inputs[:i], *tally.units] if np.array_equal(seen, vector)]
        assert not again, f"normalised twice: input {i}"


class RepeatedChecks(AssertionError):
    """A limit checked more often than once for each query it bounds."""


REPEATED_CHECKS = (
    "checked before validation on the raw JSON (door.check_configured, so that a list over "
    "its setting costs no validation) and again after it by the operation: {}"
)


@pytest.mark.parametrize(
    "case",
    [
        TOKEN,
        VECTOR_QUERY,
        pytest.param(
            ANALOGY,
            marks=pytest.mark.xfail(
                strict=True,
                raises=RepeatedChecks,
                reason=REPEATED_CHECKS.format(
                    "max_terms, on positive and on negative, then on their sum "
                    "(Resolver.analogy_terms)"
                ),
            ),
        ),
        BATCH,
    ],
    ids=lambda case: case.name,
)
def test_each_limit_is_checked_once(
    case: Case, app_of: AppOf, monkeypatch: pytest.MonkeyPatch
) -> None:
    tally = Tally()
    count_the_work(monkeypatch, tally)
    with app_of(diagnostics_at_load=False) as client:
        answer(client, case, tally)
    if tally.checks != Counter(case.checks):
        raise RepeatedChecks(f"{dict(tally.checks)}, not {case.checks}")


SERVICE = os.path.dirname(service.__file__) + os.sep
ENGINE = SERVICE + "engine" + os.sep


@contextmanager
def trips_into_the_engine(tally: Tally) -> Iterator[Counter[str]]:
    """Calls of engine functions from the service's code above the engine, on every thread
    started meanwhile (the app's loop, its batchers, its worker threads), while `recording`."""
    trips: Counter[str] = Counter()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or not tally.recording:
            return
        called, caller = frame.f_code.co_filename, frame.f_back
        if not called.startswith(ENGINE) or caller is None:
            return
        calling = caller.f_code.co_filename
        if calling.startswith(SERVICE) and not calling.startswith(ENGINE):
            trips[frame.f_code.co_qualname] += 1

    threading.setprofile(profile)
    try:
        yield trips
    finally:
        threading.setprofile(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_each_step_is_one_trip_into_the_engine(case: Case, app_of: AppOf) -> None:
    tally = Tally()
    with trips_into_the_engine(tally) as trips, app_of(diagnostics_at_load=False) as client:
        answer(client, case, tally)
    assert trips == Counter(case.trips)
