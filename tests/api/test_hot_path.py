"""Batching and caching through the real app: every caller gets the answer it gets alone."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from fastapi.testclient import TestClient

from tests.api.test_ops import metric_value
from tests.conftest import AppOf

MINILM = "/v1/tables/minilm"


@pytest.fixture(scope="module")
def unbatched(app_of: AppOf) -> Iterator[TestClient]:
    """The same tables with batching and the cache off: one search per request."""
    with app_of(batching=False, cache_bytes=0) as test_client:
        yield test_client


def concurrently(client: TestClient, path: str, bodies: list[dict]) -> list[dict]:
    with ThreadPoolExecutor(max_workers=16) as pool:
        return list(pool.map(lambda body: client.post(path, json=body).json(), bodies))


def test_concurrent_vector_queries_equal_single_queries(client, unbatched, minilm) -> None:
    rng = np.random.default_rng(11)
    bodies = [{"vector": rng.normal(size=minilm.width).tolist(), "k": 5} for _ in range(48)]
    batched = concurrently(client, f"{MINILM}/neighbors", bodies)
    alone = [unbatched.post(f"{MINILM}/neighbors", json=body).json() for body in bodies]
    assert batched == alone


def test_concurrent_analogies_equal_single_queries(client, unbatched, minilm) -> None:
    rng = np.random.default_rng(12)
    bodies = []
    for method in ("add", "mul"):
        for rows in rng.choice(minilm.rows, size=(16, 3)):
            a, b, c = (minilm.tokens[int(r)] for r in rows)
            bodies.append({"positive": [b, c], "negative": [a], "k": 4, "method": method})
    assert concurrently(client, f"{MINILM}/analogy", bodies) == [
        unbatched.post(f"{MINILM}/analogy", json=body).json() for body in bodies
    ]


def test_concurrent_scores_equal_single_queries(client, unbatched, minilm) -> None:
    rng = np.random.default_rng(13)
    bodies = [
        {"vector": rng.normal(size=minilm.width).tolist(), "k": 3, "softmax": True, "target": "the"}
        for _ in range(24)
    ]
    batched = concurrently(client, f"{MINILM}/score", bodies)
    for got, body in zip(batched, bodies, strict=True):
        alone = unbatched.post(f"{MINILM}/score", json=body).json()
        assert [t["id"] for t in got["top"]] == [t["id"] for t in alone["top"]]
        assert [t["logit"] for t in got["top"]] == [t["logit"] for t in alone["top"]]
        assert got["target"]["rank"] == alone["target"]["rank"]
        # The normaliser sums every logit of one matrix product; only its last bits may differ.
        assert got["log_partition"] == pytest.approx(alone["log_partition"], rel=1e-6)


def lookups(client: TestClient, result: str) -> float:
    text = client.get("/metrics").text
    return metric_value(
        text, "embedding_service_cache_lookups_total", operation="neighbors", result=result
    )


def test_token_queries_are_cached_and_vector_queries_are_not(client, unbatched) -> None:
    body = {"token": "paris", "k": 6, "restrict": 20000}
    hits, misses = lookups(client, "hit"), lookups(client, "miss")
    first = client.post(f"{MINILM}/neighbors", json=body)
    second = client.post(f"{MINILM}/neighbors", json=body)
    assert first.content == second.content
    assert second.json() == unbatched.post(f"{MINILM}/neighbors", json=body).json()
    assert (lookups(client, "hit"), lookups(client, "miss")) == (hits + 1, misses + 1)
    client.post(f"{MINILM}/neighbors", json={"vector": [0.5] * 384})
    assert (lookups(client, "hit"), lookups(client, "miss")) == (hits + 1, misses + 1)


def test_errors_are_not_cached(client) -> None:
    body = {"token": "paris", "exclude": ["nosuchtokenz"]}
    for _ in range(2):
        assert client.post(f"{MINILM}/neighbors", json=body).status_code == 404


def test_the_cache_stays_within_its_byte_budget(app_of: AppOf) -> None:
    budget = 8_000  # room for a few k=30 neighbour answers (about 1.9 KB each)
    tokens = ["king", "queen", "paris", "berlin", "apple", "pear", "river"]
    with app_of(cache_bytes=budget) as client:
        for token in tokens:
            client.post(f"{MINILM}/neighbors", json={"token": token, "k": 30})
        text = client.get("/metrics").text
        assert 0 < metric_value(text, "embedding_service_cache_bytes") <= budget
        assert 1 <= metric_value(text, "embedding_service_cache_entries") < len(tokens)
        hits = lookups(client, "hit")
        client.post(f"{MINILM}/neighbors", json={"token": tokens[-1], "k": 30})
        assert lookups(client, "hit") == hits + 1  # the latest answer is kept
        client.post(f"{MINILM}/neighbors", json={"token": tokens[0], "k": 30})
        assert lookups(client, "hit") == hits + 1  # the oldest was evicted


def test_one_query_is_one_entry_however_its_body_is_written(client) -> None:
    """Keys are the validated query, not the body: padding, key order and defaults spelled out
    do not add entries (a whitespace-padded body used to be a new multi-megabyte key)."""
    bodies = [
        b'{"token": "lisbon", "k": 4}',
        b'{"k": 4, "token": "lisbon"}',
        b'{"token": "lisbon", "k": 4, "exclude": [], "restrict": null}' + b" " * 100_000,
    ]
    json_type = {"content-type": "application/json"}
    hits, misses = lookups(client, "hit"), lookups(client, "miss")
    answers = {
        client.post(f"{MINILM}/neighbors", content=b, headers=json_type).content for b in bodies
    }
    assert len(answers) == 1
    assert (lookups(client, "hit"), lookups(client, "miss")) == (hits + 2, misses + 1)


def test_answers_above_the_size_limit_are_not_cached(app_of: AppOf) -> None:
    with app_of(cache_max_answer_bytes=10_000) as client:
        big = {"queries": [{"token": t, "k": 100} for t in ["king", "queen", "paris"]]}
        small = {"token": "king", "k": 3}
        assert len(client.post(f"{MINILM}/neighbors", json=big).content) > 10_000
        client.post(f"{MINILM}/neighbors", json=small)
        assert metric_value(client.get("/metrics").text, "embedding_service_cache_entries") == 1


def test_a_cached_body_under_another_content_type_is_still_refused(client) -> None:
    body = b'{"token": "berlin", "k": 3}'
    json_type = {"content-type": "application/json"}
    assert client.post(f"{MINILM}/neighbors", content=body, headers=json_type).status_code == 200
    assert client.post(f"{MINILM}/neighbors", content=body, headers=json_type).status_code == 200
    text = client.post(f"{MINILM}/neighbors", content=body, headers={"content-type": "text/plain"})
    assert text.status_code == 415
