"""Batches across a real server's limits: max_batch learned from its refusal, chunks cut to fit
the answer, direction, text and body limits, results always in order, a per-query limit raised."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import numpy as np
import pytest

from embedding_service import AsyncClient, Client, LimitExceeded
from embedding_service.errors import BodyTooLarge
from harness.server import running_server
from tests.client.helpers import Recorder, minilm_rows, minilm_table

pytestmark = pytest.mark.slow

LIMITS = {
    "EMBEDDING_SERVICE_MAX_BATCH": "8",
    "EMBEDDING_SERVICE_MAX_RESULTS": "40",
    "EMBEDDING_SERVICE_MAX_TEXT_LENGTH": "100",
    "EMBEDDING_SERVICE_MAX_BODY_BYTES": "8192",
}


@pytest.fixture(scope="module")
def limited() -> Iterator[str]:
    """A server of MiniLM whose limits are small enough to cross in a few queries."""
    env = {"EMBEDDING_SERVICE_TABLES": json.dumps([minilm_table()]), **LIMITS}
    with running_server(env) as base:
        yield base


def recorded(base: str, **options: object) -> tuple[Client, Recorder]:
    recorder = Recorder()
    return Client(base, http_options=recorder.hooks(), **options), recorder  # type: ignore[arg-type]


def test_the_server_s_published_max_batch_cuts_the_chunks_in_order(limited: str) -> None:
    tokens, _ = minilm_rows()
    chosen = tokens[4000:4050]
    client, recorder = recorded(limited)
    assert client.max_batch == 256  # the documented default, until the server says otherwise
    batch = client.neighbors("minilm", chosen, 3)
    assert recorder.statuses == [200] + [200] * 7  # GET /v1/limits, then 7 chunks of 8
    assert client.max_batch == 8 and client.limits.source == "published by the server"
    assert batch == [client.neighbors("minilm", token, 3) for token in chosen]
    recorder.statuses.clear()
    client.lookup("minilm", chosen, include_vector=False)
    assert recorder.statuses == [200] * 7  # asked once: not again


def test_a_refusal_teaches_a_max_batch_given_too_large(limited: str) -> None:
    tokens, _ = minilm_rows()
    chosen = tokens[4000:4050]
    client, recorder = recorded(limited, max_batch=100)
    batch = client.neighbors("minilm", chosen, 3)
    assert recorder.statuses == [422] + [200] * 7  # 50 queries: refused once, then chunks of 8
    assert client.max_batch == 8
    assert batch == [client.neighbors("minilm", token, 3) for token in chosen]


def test_a_given_max_batch_is_used_from_the_start(limited: str) -> None:
    client, recorder = recorded(limited, max_batch=5)
    found = client.lookup("minilm", ids=list(range(23)))
    assert recorder.statuses == [200] * 5 and found.ids == list(range(23))
    np.testing.assert_array_equal(found.vectors, minilm_rows()[1][:23])


def test_chunks_shrink_to_fit_the_answer_limit_without_lowering_max_batch(limited: str) -> None:
    tokens, _ = minilm_rows()
    client, recorder = recorded(limited, max_batch=8)
    batch = client.neighbors("minilm", tokens[6000:6016], 10)  # 8 x 10 results > 40
    assert recorder.statuses == [422] + [200] * 4  # then chunks of 4: 40 results each
    assert client.max_batch == 8
    assert batch[15] == client.neighbors("minilm", tokens[6015], 10)


def test_a_limit_each_query_exceeds_alone_is_raised_after_one_smaller_try(limited: str) -> None:
    client, recorder = recorded(limited, max_batch=8)
    with pytest.raises(LimitExceeded) as refused:
        client.neighbors("minilm", ["king"] * 8, 5000)
    assert (refused.value.limit, refused.value.got) == (1000, 5000)
    assert recorder.statuses == [422, 422]


def test_texts_are_chunked_to_the_text_length_limit(limited: str) -> None:
    texts = [f"text number {i} of the batch" for i in range(20)]  # about 25 characters each
    client, recorder = recorded(limited, max_batch=8)
    split = client.tokenize("minilm", texts)
    assert [t.text for t in split] == texts
    assert recorder.statuses[0] == 422 and set(recorder.statuses[1:]) == {200}


def test_a_body_too_large_is_sent_again_in_halves(limited: str) -> None:
    _, rows = minilm_rows()
    vectors = list(rows[100:112])  # 384 floats are 2 KiB of base64 each: 8 exceed 8 KiB
    client, recorder = recorded(limited, max_batch=8)
    batch = client.neighbors("minilm", vectors, 2)
    assert 413 in recorder.statuses and recorder.statuses[-1] == 200
    assert [result[0].id for result in batch] == list(range(100, 112))


def test_the_async_client_asks_the_same_way(limited: str) -> None:
    tokens, _ = minilm_rows()
    recorder = Recorder()

    async def batch() -> tuple[int, list[object]]:
        hooks = {"event_hooks": {"response": [recorder.asynchronous]}}
        async with AsyncClient(limited, http_options=hooks) as client:
            answer = await client.neighbors("minilm", tokens[7000:7020], 2)
            return client.max_batch, answer

    learned, answer = asyncio.run(batch())
    assert learned == 8 and recorder.statuses == [200, 200, 200, 200]  # limits, 3 chunks
    assert answer == Client(limited, max_batch=8).neighbors("minilm", tokens[7000:7020], 2)


def test_a_request_that_cannot_be_split_and_is_too_large_is_body_too_large(limited: str) -> None:
    analogies = ": s\n" + "king queen man woman\n" * 500  # about 10 KB in one request
    with pytest.raises(BodyTooLarge) as refused:
        Client(limited).evaluate("minilm", analogies=analogies)
    assert refused.value.status == 413 and refused.value.limit == 8192
