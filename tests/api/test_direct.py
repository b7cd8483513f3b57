"""The direct path answers exactly as the FastAPI routes do, and leaves them everything else."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from fastapi.testclient import TestClient

from service.api import edge as direct
from service.api import query
from service.engine.tables.table import EmbeddingTable
from service.operations import door
from tests.conftest import AppOf


@pytest.fixture(scope="module")
def direct_client(app_of: AppOf) -> Iterator[TestClient]:
    """The app with the result cache off, so every request is computed."""
    with app_of(cache_bytes=0) as client:
        yield client


@pytest.fixture(scope="module")
def routed(app_of: AppOf) -> Iterator[TestClient]:
    """The same tables and settings with direct_queries off: FastAPI's routes answer."""
    with app_of(cache_bytes=0, direct_queries=False) as client:
        yield client


def valid_requests(minilm: EmbeddingTable) -> list[tuple[str, dict]]:
    rng = np.random.default_rng(5)
    vector = rng.normal(size=minilm.width).tolist()
    return [
        ("minilm/neighbors", {"token": "king", "k": 5}),
        ("minilm/neighbors", {"id": 2000, "k": 3, "exclude": ["the"], "restrict": 5000}),
        ("minilm/neighbors", {"vector": vector, "k": 4}),
        ("minilm/neighbors", {"queries": [{"token": "paris"}, {"vector": vector, "k": 2}]}),
        ("small/neighbors", {"token": "KING", "k": 2}),
        ("minilm/analogy", {"positive": ["king", "woman"], "negative": ["man"], "k": 3}),
        (
            "minilm/analogy",
            {"positive": ["paris", "germany"], "negative": ["france"], "method": "mul"},
        ),
        ("minilm/analogy", {"positive": [{"token": "king", "weight": 2.0}, {"vector": vector}]}),
        ("minilm/analogy", {"queries": [{"positive": ["king"]}, {"positive": ["queen"], "k": 1}]}),
        ("minilm/lookup", {"tokens": ["king", "queen"]}),
        ("minilm/lookup", {"ids": [0, 5], "include_vector": False}),
        ("small/lookup", {"tokens": ["KING"]}),
        ("minilm/similarity", {"pairs": [["king", "queen"], ["man", "woman"]]}),
        ("minilm/similarity", {"tokens": ["king", "queen", "paris"]}),
        ("minilm/score", {"vector": vector, "k": 3, "softmax": True, "target": "the"}),
        ("minilm/projection", {"points": 40, "selection": "random", "seed": 3}),
        ("minilm/project", {"tokens": ["king", "queen"], "dims": 3}),
        ("minilm/diagnostics", {"tokens": ["king"], "limit": 5}),
        ("small/diagnostics", {"reference": None, "tokens": ["KING"]}),
        ("minilm/evaluate", {"pairs": "king\tqueen\t9\nman\twoman\t8\napple\tking\t1\n"}),
        ("minilm/tokenize", {"text": "Embeddings are lookup tables"}),
        ("minilm/tokenize", {"texts": ["running", "king"], "include_vector": True}),
        ("minilm/tokenize", {"detokenize": [7861, 8270, 4667, 2015]}),
        ("small/tokenize", {"text": "KING queen"}),
        ("minilm/neighbors", {"text": "unbelievably", "pieces": "mean", "k": 3}),
        ("minilm/analogy", {"positive": [{"text": "Kings"}, "woman"], "negative": ["man"]}),
        ("minilm/similarity", {"pairs": [["king", {"text": "Queen"}]]}),
        ("minilm/lookup", {"tokens": [{"text": "lookup", "pieces": "mean"}]}),
        ("minilm/score", {"text": "king", "k": 3}),
        ("run/neighbors", {"token": "w3", "k": 4, "checkpoint": 1}),
        ("run/lookup", {"ids": [0, 9], "checkpoint": 0}),
        ("run/trajectory", {"tokens": ["w0", "w7"], "dims": 3}),
        ("run/trajectory", {"points": 30, "selection": "random", "seed": 2}),
        ("run/drift", {"from": 1, "tokens": ["w5"], "k": 3, "limit": 4}),
        ("small/drift", {"from": "small", "limit": 2}),
        ("minilm/cosines", {"token": "king"}),
        ("minilm/cosines", {"vector": vector, "offset": 100, "limit": 1000}),
        ("minilm/cosines", {"positive": ["king", "woman"], "negative": ["man"]}),
        ("minilm/cosines", {"positive": ["paris", "germany"], "negative": ["france"],
                            "method": "mul"}),
        ("small/cosines", {"token": "KING"}),
        ("run/cosines", {"id": 3, "checkpoint": 1}),
        ("minilm/analogy", {"negative": ["man", {"token": "king", "weight": 0.5}], "k": 3}),
        ("minilm/analogy", {"positive": ["king", {"vector": vector}], "negative": [{"vector":
                            vector}], "method": "mul", "vector_terms": "as_given"}),
        ("minilm/cosines", {"negative": ["man"], "limit": 100}),
        ("minilm/cosines", {"positive": [{"vector": vector}], "method": "mul",
                            "vector_terms": "as_given", "offset": 500, "limit": 100}),
        ("minilm/evaluate", {"pairs": "king\tqueen\t9\nman\twoman\t8\napple\tking\t1\n"
                             "qqzx\tking\t2\n", "dummy4unknown": True}),
        ("minilm/evaluate", {"analogies": ": s\nman king woman queen\nqqzx a b c\n",
                             "questions": True, "dummy4unknown": True}),
        ("minilm/rank", {"token": "king", "others": ["queen", "paris"]}),
        ("minilm/rank", {"id": 2332, "others": ["paris"], "closer_rows": {"offset": 10}}),
        ("small/rank", {"token": "KING", "others": ["[PAD]", "queen"]}),
    ]  # fmt: skip


def counting(monkeypatch: pytest.MonkeyPatch, *modules: object) -> list[str]:
    """Replace the door's `answer` in `modules` with one that records each operation."""
    answered: list[str] = []

    async def recording(operation, *args):
        answered.append(operation.name)
        return await door.answer(operation, *args)

    for module in modules:
        monkeypatch.setattr(module, "answer", recording)
    return answered


def test_valid_requests_get_the_routes_answers(direct_client, routed, minilm, monkeypatch) -> None:
    by_direct = counting(monkeypatch, direct)
    by_routes = counting(monkeypatch, query)
    requests = valid_requests(minilm)
    for path, body in requests:
        fast, slow = (c.post(f"/v1/tables/{path}", json=body) for c in (direct_client, routed))
        assert fast.status_code == slow.status_code == 200, (path, body)
        assert fast.content == slow.content, (path, body)
        assert fast.headers["content-type"] == slow.headers["content-type"]
    operations = [path.split("/")[1] for path, _ in requests]
    assert by_direct == operations  # the direct path answered every one on the first app
    assert by_routes == operations  # and the routes every one on the second


@pytest.mark.parametrize(
    ("path", "content", "content_type"),
    [
        ("minilm/neighbors", b'{"token": "king"', "application/json"),  # malformed: 400
        ("minilm/neighbors", b'{"token": "king", "k": 0}', "application/json"),  # invalid: 422
        ("minilm/neighbors", b'{"token": "king"}', "text/plain"),  # 415
        ("nosuchtable/neighbors", b'{"token": "king"}', "application/json"),  # 404
        ("minilm/neighbors", b'{"token": "nosuchtokenq"}', "application/json"),  # 404, in lane
        ("minilm/neighbors", b'{"vector": [1.0, 2.0]}', "application/json"),  # width: 422
        ("minilm/analogy", b'{"positive": ["king"], "negative": ["king"]}', "application/json"),
        ("minilm/analogy", b'{"positive": [], "method": "mul"}', "application/json"),
        (
            "minilm/analogy",
            b'{"positive": [{"token": "king", "weight": 2}], "method": "mul", '
            b'"vector_terms": "as_given"}',
            "application/json",
        ),  # a weight with raw vectors as given: 422
        ("minilm/evaluate", b'{"pairs": "a\tb\t1\n", "questions": true}', "application/json"),
        ("minilm/lookup", b'{"ids": [99999999]}', "application/json"),  # 404, unknown id
        ("minilm/similarity", b'{"pairs": [["king"]]}', "application/json"),  # invalid: 422
        ("minilm/score", b'{"vector": [1.0], "k": 2}', "application/json"),  # width: 422
        ("minilm/neighbors", b'{"text": "unbelievably"}', "application/json"),  # 422 split
        ("minilm/tokenize", b'{"text": ""}', "application/json"),  # invalid: 422
        ("small/tokenize", b'{"text": "plum"}', "application/json"),  # 404, unknown word
        ("run/neighbors", b'{"token": "w1", "checkpoint": 7}', "application/json"),  # 404
        ("run/drift", b'{"from": "small"}', "application/json"),  # other width: 422
        ("run/trajectory", b'{"points": 0}', "application/json"),  # invalid: 422
        ("minilm/cosines", b'{"token": "king", "method": "mul"}', "application/json"),  # 422
        ("small/cosines", b'{"token": "[PAD]"}', "application/json"),  # zero row: 422
        (
            "minilm/rank",
            b'{"token": "king", "others": ["x", "y"], "closer_rows": {}}',
            "application/json",
        ),
        ("minilm/rank", b'{"token": "king", "others": ["nosuchtokenq"]}', "application/json"),
    ],
)
def test_refused_requests_get_the_routes_errors(direct_client, routed, path, content, content_type):
    headers = {"content-type": content_type}
    fast, slow = (
        c.post(f"/v1/tables/{path}", content=content, headers=headers)
        for c in (direct_client, routed)
    )
    assert fast.status_code == slow.status_code
    assert 400 <= fast.status_code < 500
    assert fast.json() == slow.json()
