"""Overload: the batch queue and requests in flight are bounded; past them, 429 + Retry-After."""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.error
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from harness.server import running_server
from service.config import Settings
from service.errors import Overloaded
from service.runtime.batching import Batcher
from tests.test_batching import Recorder


def test_the_queue_refuses_items_past_its_bound_and_serves_the_rest() -> None:
    recorder = Recorder()
    batcher = Batcher(
        "test", recorder, Settings(batch_max_size=100, max_queue=3, retry_after_seconds=2)
    )

    async def scenario() -> tuple[list, int]:
        batcher.start()
        recorder.release.clear()
        first = asyncio.ensure_future(batcher.submit(0))  # taken by the worker, held
        await asyncio.sleep(0.05)
        queued = [asyncio.ensure_future(batcher.submit(item)) for item in (1, 2, 3, 4, 5)]
        await asyncio.sleep(0.05)
        assert batcher.queued == 3
        recorder.release.set()
        results = await asyncio.gather(first, *queued, return_exceptions=True)
        after = await batcher.submit(6)
        await batcher.close()
        return results, after

    results, after = asyncio.run(scenario())
    assert results[:4] == [0, 2, 4, 6]
    assert all(isinstance(result, Overloaded) for result in results[4:])
    assert results[4].retry_after == 2 and results[4].details["limit"] == 3
    assert after == 12


def test_a_request_batch_is_admitted_whole_or_not_at_all() -> None:
    recorder = Recorder()
    batcher = Batcher("test", recorder, Settings(batch_max_size=100, max_queue=4))

    async def scenario() -> tuple[object, list, list]:
        batcher.start()
        recorder.release.clear()
        first = asyncio.ensure_future(batcher.submit(0))
        await asyncio.sleep(0.05)
        fits = asyncio.ensure_future(batcher.submit_many([1, 2]))
        await asyncio.sleep(0.01)
        try:
            await batcher.submit_many([3, 4, 5])
            refused: object = None
        except Overloaded as error:
            refused = error
        assert batcher.queued == 2  # nothing of the refused batch was queued
        recorder.release.set()
        done = await asyncio.gather(first, fits)
        # An empty queue admits a batch larger than the bound: it could never fit otherwise.
        large = await batcher.submit_many(list(range(10)))
        await batcher.close()
        return refused, done, large

    refused, done, large = asyncio.run(scenario())
    assert isinstance(refused, Overloaded)
    assert done == [0, [2, 4]]
    assert large == [item * 2 for item in range(10)]


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
