"""AsyncClient: every method answers what Client answers, and concurrent calls keep their order."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

from embedding_service import Analogy, AsyncClient, Client, Text
from tests.checkpoint_sets import synthetic_rows
from tests.client.helpers import minilm_rows, plain

pytestmark = pytest.mark.slow


def calls() -> list[tuple[str, tuple[Any, ...], dict[str, Any]]]:
    """One call of every method, as (name, arguments, keyword arguments)."""
    tokens, rows = minilm_rows()
    run_tokens, _, _ = synthetic_rows()
    vector = rows[tokens.index("king")]
    questions = [Analogy(["king", "woman"], ["man"])] * 300
    return [
        ("tables", (), {}),
        ("table", ("run",), {}),
        ("lookup", ("minilm", tokens[1000:1300]), {}),
        ("lookup", ("minilm",), {"ids": [1, 2, 3], "include_vector": False}),
        ("neighbors", ("minilm", "king", 5), {}),
        ("neighbors", ("minilm", [*tokens[3000:3270], vector, 7], 3), {"restrict": 9000}),
        ("analogy", ("minilm", ["king", "woman"], ["man"], 4), {"method": "mul"}),
        ("analogy", ("minilm", questions), {"k": 2}),
        ("similarity", ("minilm", [("king", "queen")] * 260), {}),
        ("similarity", ("minilm",), {"tokens": ["king", Text("unbelievably", "mean")]}),
        ("score", ("minilm", vector, 3), {"softmax": True, "target": "queen"}),
        ("cosines", ("minilm", "king"), {"offset": 30000}),
        ("cosines", ("minilm", Analogy(["paris", vector], ["france"])), {"method": "mul"}),
        ("rank", ("minilm", "king", tokens[6000:6300]), {}),
        ("rank", ("minilm", 2332, "paris"), {"closer_rows": True, "limit": 10}),
        ("tokenize", ("minilm", "unbelievably"), {"include_vector": True}),
        ("tokenize", ("minilm", ["a b"] * 270), {}),
        ("detokenize", ("minilm", [2332, 3035]), {}),
        ("embed", ("wordllama", ["a text", "another one"] * 140), {"dimensions": 64}),
        ("projection", ("minilm",), {"points": 20, "dims": 3}),
        ("project", ("minilm",), {"vectors": [vector, rows[5]]}),
        ("diagnostics", ("minilm",), {"tokens": ["king"], "limit": 3}),
        ("evaluate", ("minilm",), {"analogies": ": s\nking queen man woman\n"}),
        ("trajectory", ("run", run_tokens[:4]), {}),
        ("drift", ("run",), {"source": 1, "tokens": run_tokens[:1], "k": 2}),
    ]


def test_every_method_answers_as_the_synchronous_client(sync_client: Client, served: str) -> None:
    async def every_call() -> list[Any]:
        async with AsyncClient(served) as client:
            return [await getattr(client, name)(*args, **kw) for name, args, kw in calls()]

    answers = asyncio.run(every_call())
    for (name, args, kwargs), answer in zip(calls(), answers, strict=True):
        expected = getattr(sync_client, name)(*args, **kwargs)
        assert type(answer) is type(expected), name
        assert plain(answer) == plain(expected), name


def test_concurrent_calls_each_get_their_own_answer_in_order(
    sync_client: Client, served: str
) -> None:
    tokens, _ = minilm_rows()
    chosen = tokens[5000:5064]

    async def concurrently() -> list[Any]:
        async with AsyncClient(served) as client:
            singles = [client.neighbors("minilm", token, 3) for token in chosen]
            batches = [client.neighbors("minilm", chosen[i : i + 8], 3) for i in range(0, 64, 8)]
            return await asyncio.gather(*singles, *batches)

    answers = asyncio.run(concurrently())
    expected = sync_client.neighbors("minilm", chosen, 3)
    assert answers[:64] == expected
    assert [result for batch in answers[64:] for result in batch] == expected


def test_the_async_client_returns_numpy_rows(served: str) -> None:
    _, rows = minilm_rows()

    async def look_up() -> Any:
        async with AsyncClient(served) as client:
            return await client.lookup("minilm", ids=list(range(300)))

    found = asyncio.run(look_up())
    assert found.vectors.dtype == np.float32
    np.testing.assert_array_equal(found.vectors, rows[:300])
