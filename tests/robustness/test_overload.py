"""Overload: the batch queue and requests in flight are bounded; past them, 429 + Retry-After."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from harness.server import running_server


def post(url: str, body: dict) -> tuple[int, dict, dict]:
    """POST JSON; status, headers and parsed body, for errors too."""
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


@pytest.mark.slow
def test_a_flood_is_shed_with_429_and_everything_accepted_is_answered() -> None:
    """The real server with tight bounds, flooded by 32 clients sending batches of vectors."""
    env = {"EMBEDDING_SERVICE_MAX_IN_FLIGHT": "8", "EMBEDDING_SERVICE_MAX_QUEUE": "64"}
    vectors = np.random.default_rng(3).normal(size=(32, 384)).round(4).tolist()
    body = {"queries": [{"vector": vector, "k": 5} for vector in vectors]}
    with running_server(env) as base:
        url = f"{base}/v1/tables/minilm/neighbors"
        statuses: Counter[int] = Counter()
        shed: list[tuple[dict, dict]] = []
        lock = threading.Lock()

        def client(_: int) -> None:
            for _ in range(15):
                status, headers, answer = post(url, body)
                with lock:
                    statuses[status] += 1
                    if status != 200:
                        shed.append((headers, answer))

        with ThreadPoolExecutor(32) as pool:
            list(pool.map(client, range(32)))
        assert post(url, {"token": "king", "k": 1})[2]["neighbors"][0]["token"] == "kings"
    assert set(statuses) == {200, 429}, statuses
    assert statuses[200] >= 32 and statuses[429] >= 32, statuses
    for headers, answer in shed:
        assert headers["retry-after"] == "1"
        assert answer["error"]["type"] == "Overloaded"
