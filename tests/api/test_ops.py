"""Tables, health, readiness and metrics endpoints."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from service.api.app import create_app
from service.config import Settings
from service.engine.search import dots
from service.loading.registry import Registry
from service.loading.tables import load_registry


def test_table_list_and_info(client: TestClient) -> None:
    tables = client.get("/v1/tables").json()["tables"]
    assert [t["name"] for t in tables] == ["minilm", "small", "run", "wordllama"]
    info = client.get("/v1/tables/minilm").json()
    assert (info["rows"], info["width"], info["parameters"]) == (30522, 384, 30522 * 384)
    compiled = (  # test_dots: built, and running with AVX-512
        "compiled pass over the raw rows (AVX-512) for 2-23 queries a batch, BLAS matrix "
        "product for the others"
    )
    pass_ = compiled if dots.AVAILABLE else "BLAS matrix product over the raw rows"
    assert info["index_type"] == f"exact inner product, {pass_}"
    # One float32 copy of the rows (no normalised second copy), norms, vocabulary: ~1.05x.
    assert 30522 * 384 * 4 < info["bytes"] < 1.1 * 30522 * 384 * 4
    assert info["index"]["kind"] == "exact" and info["index"]["state"] == "exact"
    assert info["zero_rows"] == 0
    assert info["source"].endswith("model")
    assert info["load_seconds"] > 0
    small = client.get("/v1/tables/small").json()
    assert (small["zero_rows"], small["case_insensitive"]) == (1, True)
    assert small["checkpoints"] == [{"index": 0, "label": "table", "source": "small.npy"}]
    run = client.get("/v1/tables/run").json()
    assert [c["label"] for c in run["checkpoints"]] == [f"{i:03d}-step{i}" for i in range(5)]
    assert run["source"].endswith("004-step4_tensors.bytes")


@pytest.mark.parametrize(
    ("kernel", "pass_"),
    [
        ("blas", "BLAS matrix product over the raw rows"),
        ("faiss", "FAISS knn_inner_product over a unit float32 copy"),
    ],
)
def test_a_table_names_the_pass_that_answers_it(settings: Settings, kernel: str, pass_: str):
    # search_kernel=faiss holds a unit copy beside the rows: the table's size again.
    chosen = settings.model_copy(update={"search_kernel": kernel, "tables": settings.tables[1:2]})
    with TestClient(create_app(chosen, load_registry(chosen))) as client:
        info = client.get("/v1/tables/small").json()
        found = client.post("/v1/tables/small/neighbors", json={"token": "king", "k": 3})
    assert info["index_type"] == f"exact inner product, {pass_}"
    copies = 2 if kernel == "faiss" else 1
    assert copies * info["rows"] * info["width"] * 4 < info["bytes"]
    assert found.status_code == 200 and len(found.json()["neighbors"]) == 3


def test_health_and_readiness(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = {"status": "ready", "tables": ["minilm", "small", "run", "wordllama"]}
    assert client.get("/readyz").json() == ready


def test_not_ready_until_every_table_is_loaded() -> None:
    registry = Registry(expected=["minilm"])
    with TestClient(create_app(Settings(), registry)) as client:
        response = client.get("/readyz")
        assert response.status_code == 503
        assert response.json()["error"]["type"] == "NotReady"
        assert "minilm" in response.json()["error"]["message"]
        assert client.get("/healthz").status_code == 200
        query = client.post("/v1/tables/minilm/neighbors", json={"token": "king"})
        assert query.status_code == 503
        assert query.json()["error"]["type"] == "TableNotReady"


def metric_value(text: str, name: str, **labels: str) -> float:
    """The value of one sample in Prometheus text format (0 when absent)."""
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            found = dict(re.findall(r'(\w+)="([^"]*)"', line.split(" ")[0]))
            if all(found.get(k) == v for k, v in labels.items()):
                return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_metrics_count_requests_by_route_template(client: TestClient) -> None:
    route = "/v1/tables/{table}/neighbors"
    name = "embedding_service_http_requests_total"
    before = metric_value(client.get("/metrics").text, name, route=route, status_class="2xx")
    errors_before = metric_value(
        client.get("/metrics").text, "embedding_service_errors_total", type="UnknownToken"
    )
    client.post("/v1/tables/minilm/neighbors", json={"token": "king"})
    client.post("/v1/tables/minilm/neighbors", json={"token": "nosuchtokenq"})
    text = client.get("/metrics").text
    assert metric_value(text, name, route=route, status_class="2xx") == before + 1
    assert (
        metric_value(text, "embedding_service_errors_total", type="UnknownToken")
        == errors_before + 1
    )
    assert metric_value(text, "embedding_service_table_rows", table="minilm") == 30522
    assert metric_value(text, "embedding_service_table_width", table="minilm") == 384
    assert (
        metric_value(text, "embedding_service_search_duration_seconds_count", operation="search")
        >= 1
    )
    assert 'le="0.0001"' in text  # sub-millisecond buckets
    assert "/v1/tables/minilm/neighbors" not in text  # the template, never the raw path


def test_the_limits_are_published_under_their_settings_names(app_of) -> None:
    """GET /v1/limits: what clients size batches by (the client and the explorer ask it)."""
    with app_of(max_batch=8, max_results=40) as client:
        limits = client.get("/v1/limits").json()
    assert limits["max_batch"] == 8 and limits["max_results"] == 40
    assert limits["max_k"] == 500 and limits["default_k"] == 10
    assert set(limits) >= {"max_text_length", "max_directions", "max_body_bytes"}
    assert limits["max_embedding_inputs"] == 256 and limits["max_embedding_text_length"] == 8192
