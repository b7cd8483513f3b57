"""The answer cache: least recently used answers within a byte budget (against a plain list
kept in the same order), and through the real app an answer from the cache is the answer
computed, for requests one field apart in each field of the cached bodies, and across a reload.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from service.api.app import create_app
from service.config import Settings, TableSpec
from service.engine.indexes import building
from service.loading.tables import load_registry
from service.runtime.cache import ENTRY_OVERHEAD, ResultCache
from tests.api.test_big_tables import wait_ready
from tests.conftest import AppOf
from tests.query_pairs import INDEXED, Apart, Body, Pair, cached_fields, pair_of, write_indexed


def cost(answer: bytes) -> int:
    """What an answer takes of the budget."""
    return len(answer) + ENTRY_OVERHEAD


def filled(budget: int, answers: list[bytes]) -> ResultCache:
    """A cache of `budget` bytes holding `answers` under the keys 0, 1, ... (oldest first)."""
    cache = ResultCache(budget, max_answer_bytes=budget)
    for key, answer in enumerate(answers):
        cache.put(bytes([key]), answer)
    return cache


def held(cache: ResultCache, keys: int) -> list[int]:
    """Which of the keys 0 .. keys-1 the cache holds (each lookup makes its answer the newest)."""
    return [key for key in range(keys) if cache.get("neighbors", bytes([key])) is not None]


def test_an_answer_is_found_by_its_own_key_only() -> None:
    cache = filled(10_000, [b"zero", b"one"])
    assert cache.get("neighbors", bytes([1])) == b"one"
    assert cache.get("neighbors", bytes([0])) == b"zero"
    assert cache.get("neighbors", bytes([2])) is None


def test_the_oldest_answers_leave_first_and_the_bytes_stay_within_the_budget() -> None:
    answers = [bytes([i]) * 100 for i in range(4)]
    cache = filled(3 * cost(answers[0]), answers)
    assert cache.bytes == 3 * cost(answers[0]) <= cache.max_bytes
    assert held(cache, 4) == [1, 2, 3]


def test_a_lookup_makes_an_answer_the_newest() -> None:
    answers = [bytes([i]) * 100 for i in range(3)]
    cache = filled(3 * cost(answers[0]), answers)
    assert cache.get("neighbors", bytes([0])) == answers[0]
    cache.put(bytes([3]), b"3" * 100)
    assert held(cache, 4) == [0, 2, 3]


def test_a_large_answer_evicts_as_many_of_the_oldest_as_it_needs() -> None:
    small = [bytes([i]) * 100 for i in range(4)]
    cache = filled(4 * cost(small[0]), small)
    cache.put(bytes([4]), b"4" * 250)  # the room of two small ones and a half
    assert held(cache, 5) == [2, 3, 4]
    assert cache.bytes == 2 * cost(small[0]) + cost(b"4" * 250)


def test_an_answer_over_either_bound_is_not_stored_and_evicts_nothing() -> None:
    answers = [bytes([i]) * 100 for i in range(3)]
    cache = filled(3 * cost(answers[0]), answers)
    cache.max_answer_bytes = 200
    cache.put(bytes([3]), b"3" * 201)  # over max_answer_bytes
    cache.max_answer_bytes = 10_000
    cache.put(bytes([4]), b"4" * (cache.max_bytes - ENTRY_OVERHEAD + 1))  # over the budget
    assert held(cache, 5) == [0, 1, 2]


def test_storing_a_key_again_replaces_its_answer_and_its_bytes() -> None:
    cache = filled(10_000, [b"a" * 100])
    cache.put(bytes([0]), b"b" * 300)
    assert len(cache) == 1 and cache.bytes == cost(b"b" * 300)
    assert cache.get("neighbors", bytes([0])) == b"b" * 300


def test_a_budget_of_nothing_stores_nothing() -> None:
    cache = ResultCache(0, 1000)
    cache.put(b"key", b"answer")
    assert not cache.enabled and len(cache) == 0 and cache.bytes == 0


class Reference:
    """What a least-recently-used cache within a byte budget holds: a list, oldest first."""

    def __init__(self, budget: int, most: int) -> None:
        self.budget, self.most = budget, most
        self.entries: list[tuple[bytes, bytes]] = []

    def get(self, key: bytes) -> bytes | None:
        for i, (stored, answer) in enumerate(self.entries):
            if stored == key:
                self.entries.append(self.entries.pop(i))
                return answer
        return None

    def put(self, key: bytes, answer: bytes) -> None:
        if len(answer) > self.most or cost(answer) > self.budget:
            return
        self.entries = [entry for entry in self.entries if entry[0] != key] + [(key, answer)]
        while self.bytes > self.budget:
            self.entries.pop(0)

    @property
    def bytes(self) -> int:
        return sum(cost(answer) for _, answer in self.entries)


STEPS = st.lists(st.tuples(st.booleans(), st.integers(0, 7), st.integers(0, 900)), max_size=60)


@settings(max_examples=300, deadline=None)
@given(STEPS)
def test_the_cache_holds_what_a_reference_list_holds(steps: list[tuple[bool, int, int]]) -> None:
    budget, most = 1500, 700  # four answers of ~100 bytes, or one of 700 and a few small
    cache, reference = ResultCache(budget, most), Reference(budget, most)
    for storing, key, size in steps:
        name, answer = bytes([key]), bytes([key, size % 256]) * (size // 2)
        if storing:
            cache.put(name, answer)
            reference.put(name, answer)
        else:
            assert cache.get("neighbors", name) == reference.get(name)
        assert cache.bytes == reference.bytes <= budget
        assert len(cache) == len(reference.entries)


# Through the app: a cache whose key leaves out anything that changes an answer serves a wrong one.

Clients = tuple[TestClient, TestClient]


@pytest.fixture(scope="module")
def shared_clients(app_of: AppOf) -> Iterator[Clients]:
    """The shared tables served with the cache (its own, empty) and without it."""
    with app_of() as cached, app_of(cache_bytes=0) as computed:
        yield cached, computed


@pytest.fixture(scope="module")
def indexed_clients(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Clients]:
    """The indexed tables of tests/query_pairs.py, with and without the cache, indexes built."""
    served = Settings(tables=write_indexed(tmp_path_factory.mktemp("indexed")))
    registry = load_registry(served)
    uncached = served.model_copy(update={"cache_bytes": 0})
    with (
        TestClient(create_app(served, registry)) as cached,
        TestClient(create_app(uncached, registry)) as computed,
    ):
        for table in INDEXED:
            assert wait_ready(computed, table)["index"]["state"] == "ready"
        yield cached, computed


def answered(client: TestClient, url: str, body: Body) -> tuple[int, bytes]:
    response = client.post(url, json=body)
    return response.status_code, response.content


def told_apart(computed: TestClient, url: str, pair: Pair) -> Apart:
    """The first candidate of `pair` whose requests are answered differently."""
    for first, second in pair.candidates:
        if answered(computed, url, first) != answered(computed, url, second):
            return first, second
    where = f"{pair.table}/{pair.operation}"
    raise AssertionError(f"no pair of {where} is answered two ways: it tells nothing apart")


@pytest.mark.parametrize(("operation", "model", "field"), cached_fields())
def test_an_answer_from_the_cache_is_the_answer_computed(
    operation: str,
    model: str,
    field: str,
    request: pytest.FixtureRequest,
) -> None:
    pair = pair_of(operation, model, field)
    indexed = pair.table in INDEXED
    cached, computed = request.getfixturevalue("indexed_clients" if indexed else "shared_clients")
    url = f"/v1/tables/{pair.table}/{operation}"
    first, second = told_apart(computed, url, pair)
    # Each twice, alternately: whichever is stored first, the other must not be answered by it.
    for body in (first, second, first, second):
        assert answered(cached, url, body) == answered(computed, url, body), (field, body)


def write_small(folder: Path, seed: int) -> np.ndarray:
    """A table of 30 random rows, tokens w0 ... w29, as .npy + .vocab in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = np.random.default_rng(seed).normal(size=(30, 8)).astype(np.float32)
    np.save(folder / "t.npy", rows)
    (folder / "t.vocab").write_text("".join(f"w{i}\n" for i in range(30)))
    return rows


def nearest(rows: np.ndarray, row: int, k: int) -> list[dict[str, Any]]:
    """The k rows of highest cosine to `row`, itself left out, as /neighbors lists them."""
    unit = rows.astype(np.float64) / np.linalg.norm(rows.astype(np.float64), axis=1)[:, None]
    scores = unit @ unit[row]
    scores[row] = -np.inf
    best = np.argsort(-scores, kind="stable")[:k]
    return [{"token": f"w{i}", "id": int(i), "score": pytest.approx(scores[i])} for i in best]


def test_a_reload_is_never_answered_from_the_table_before_it(tmp_path: Path) -> None:
    folder = tmp_path / "tables"
    before = write_small(folder, seed=1)
    spec = TableSpec(name="t", path=folder / "t.npy", vocab=folder / "t.vocab")
    settings = Settings(tables=[spec], admin_key="admin-key", admin_tables_dir=tmp_path)
    body = {"token": "w3", "k": 5}
    with TestClient(create_app(settings)) as client:
        for _ in range(2):  # computed, then from the cache
            assert client.post("/v1/tables/t/neighbors", json=body).json()["neighbors"] == (
                nearest(before, 3, 5)
            )
        after = write_small(folder, seed=2)
        assert nearest(after, 3, 5) != nearest(before, 3, 5)
        headers = {"authorization": "Bearer admin-key"}
        assert client.post("/v1/admin/tables/t/reload", headers=headers).status_code == 200
        answer = client.post("/v1/tables/t/neighbors", json=body).json()
        assert answer["neighbors"] == nearest(after, 3, 5)


class StaleAnswers(AssertionError):
    """Answers from the cache that the table as it is served would not give."""


def test_an_index_attached_after_the_load_is_not_answered_from_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    held_back = threading.Event()
    build = building.build_index

    def after_the_queries(*args: Any, **kwargs: Any) -> Any:
        held_back.wait(timeout=60)
        return build(*args, **kwargs)

    monkeypatch.setattr(building, "build_index", after_the_queries)
    request.addfinalizer(held_back.set)  # never a build left waiting
    served = Settings(tables=write_indexed(tmp_path / "tables")[:1])  # hnsw
    registry = load_registry(served)
    uncached = served.model_copy(update={"cache_bytes": 0})
    bodies = [{"token": f"w{i}", "k": 10, "ef_search": 1} for i in range(0, 4000, 199)]
    url = "/v1/tables/hnsw/neighbors"
    with (
        TestClient(create_app(served, registry)) as cached,
        TestClient(create_app(uncached, registry)) as computed,
    ):
        assert cached.get("/v1/tables/hnsw").json()["index"]["state"] == "building"
        exhaustive = [answered(cached, url, body) for body in bodies]
        held_back.set()
        assert wait_ready(computed, "hnsw")["index"]["state"] == "ready"
        approximate = [answered(computed, url, body) for body in bodies]
        assert exhaustive != approximate  # the index changes some answers
        stale = [
            b for b, a in zip(bodies, approximate, strict=True) if answered(cached, url, b) != a
        ]
        if stale:
            raise StaleAnswers(f"{len(stale)} of {len(bodies)} answered as before the index")
