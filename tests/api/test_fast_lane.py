"""The fast lane answers exactly as the FastAPI routes do, and leaves them everything else."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from service.api import fast_lane, routes_search
from service.api.fast_lane import FastLaneMiddleware
from service.config import Settings
from service.engine.table import EmbeddingTable
from service.main import create_app


def without_lane(app: FastAPI) -> FastAPI:
    """The same app with every request answered by the FastAPI routes."""
    app.user_middleware = [m for m in app.user_middleware if m.cls is not FastLaneMiddleware]
    return app


@pytest.fixture(scope="module")
def laned(settings: Settings) -> Iterator[TestClient]:
    """The app with the result cache off, so every request reaches the lane."""
    with TestClient(create_app(settings.model_copy(update={"cache_entries": 0}))) as client:
        yield client


@pytest.fixture(scope="module")
def routed(settings: Settings) -> Iterator[TestClient]:
    """The same tables and settings, without the fast lane."""
    uncached = settings.model_copy(update={"cache_entries": 0})
    with TestClient(without_lane(create_app(uncached))) as client:
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
    ]


def test_valid_requests_get_the_routes_answers(laned, routed, minilm, monkeypatch) -> None:
    answered = []

    async def counting_answer(*args):
        answered.append(args[0])
        return await routes_search.answer(*args)

    monkeypatch.setattr(fast_lane, "answer", counting_answer)
    requests = valid_requests(minilm)
    for path, body in requests:
        fast, slow = (c.post(f"/v1/tables/{path}", json=body) for c in (laned, routed))
        assert fast.status_code == slow.status_code == 200, (path, body)
        assert fast.content == slow.content, (path, body)
        assert fast.headers["content-type"] == slow.headers["content-type"]
    assert len(answered) == len(requests)  # every one went through the lane


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
    ],
)
def test_refused_requests_get_the_routes_errors(laned, routed, path, content, content_type):
    headers = {"content-type": content_type}
    fast, slow = (
        c.post(f"/v1/tables/{path}", content=content, headers=headers) for c in (laned, routed)
    )
    assert fast.status_code == slow.status_code
    assert 400 <= fast.status_code < 500
    assert fast.json() == slow.json()
