"""Big-table features through the app: approximate indexes per table, per-request options,
their facts and gauges, the cache directory, and bad input at load and reload."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from service.api.app import create_app
from service.config import Settings, TableSpec
from service.engine.errors import TableLoadError
from service.engine.search.approximate import DEFAULT_PROBE_MARGIN
from tests.robustness.conftest import assert_envelope

ROWS, WIDTH = 5000, 16
ADMIN = {"authorization": "Bearer admin-key"}


def write_clustered(folder: Path, rows: int = ROWS, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(50, WIDTH))
    vectors = centres[rng.integers(0, 50, rows)] + 0.3 * rng.normal(size=(rows, WIDTH))
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "big.npy", vectors.astype(np.float32))
    (folder / "big.vocab").write_text("\n".join(f"w{i}" for i in range(rows)) + "\n")
    return folder / "big.npy"


def wait_ready(client: TestClient, table: str = "big") -> dict:
    for _ in range(300):
        info = client.get(f"/v1/tables/{table}").json()
        if info["index"]["state"] in ("ready", "failed", "exact"):
            return info
        time.sleep(0.05)
    raise AssertionError(f"the index of {table} never got ready: {info['index']}")


@pytest.fixture()
def hnsw_client(tmp_path: Path) -> Iterator[TestClient]:
    path = write_clustered(tmp_path / "tables")
    spec = TableSpec(
        name="big", path=path, vocab=path.with_suffix(".vocab"), index="hnsw", max_ef_search=300
    )
    settings = Settings(tables=[spec], cache_dir=tmp_path / "cache", admin_key="admin-key",
                        admin_tables_dir=tmp_path)  # fmt: skip
    with TestClient(create_app(settings)) as client:
        yield client


def test_an_hnsw_table_reports_its_index_and_recall(hnsw_client: TestClient) -> None:
    info = wait_ready(hnsw_client)
    index = info["index"]
    assert index["kind"] == "hnsw" and index["state"] == "ready"
    assert index["recall_at_10"] >= 0.95 and index["recall_queries"] == 200
    assert index["parameters"]["max_ef_search"] == 300 and index["bytes"] > 0
    assert "hnsw" in info["index_type"]
    assert info["bytes"] >= ROWS * WIDTH * 4 + index["bytes"]
    metrics = hnsw_client.get("/metrics").text
    assert 'embedding_service_index_recall_at_10{kind="hnsw",table="big"}' in metrics


def test_per_request_options_within_bounds(hnsw_client: TestClient) -> None:
    wait_ready(hnsw_client)
    url = "/v1/tables/big/neighbors"
    exact = hnsw_client.post(url, json={"token": "w5", "k": 5, "exact": True}).json()
    wide = hnsw_client.post(url, json={"token": "w5", "k": 5, "ef_search": 300}).json()
    assert exact["neighbors"] == wide["neighbors"]
    error = assert_envelope(
        hnsw_client.post(url, json={"token": "w5", "ef_search": 301}), 422, "LimitExceeded"
    )
    assert "ef_search is 301, above the limit of 300" in error["message"]
    assert_envelope(hnsw_client.post(url, json={"token": "w5", "nprobe": 2}), 422, "InvalidQuery")
    assert_envelope(hnsw_client.post(url, json={"token": "w5", "k_factor": 2}), 422,
                    "InvalidQuery")  # fmt: skip
    assert_envelope(hnsw_client.post(url, json={"token": "w5", "probe_margin": 0.3}), 422,
                    "InvalidQuery")  # fmt: skip
    assert_envelope(hnsw_client.post(url, json={"token": "w5", "ef_search": 0}), 422,
                    "ValidationError")  # fmt: skip
    analogy = {"positive": ["w1", "w2"], "negative": ["w3"], "k": 3, "exact": True}
    assert hnsw_client.post("/v1/tables/big/analogy", json=analogy).status_code == 200


def test_a_fastscan_table_rescores_exactly_and_bounds_its_depth(tmp_path: Path) -> None:
    path = write_clustered(tmp_path / "tables")
    spec = TableSpec(name="big", path=path, vocab=path.with_suffix(".vocab"), index="fastscan",
                     k_factor=8, max_k_factor=16)  # fmt: skip
    with TestClient(create_app(Settings(tables=[spec]))) as client:
        index = wait_ready(client)["index"]
        assert index["kind"] == "fastscan" and index["state"] == "ready"
        assert index["parameters"]["k_factor"] == 8 and index["recall_at_10"] >= 0.9
        assert 0 < index["bytes"] < ROWS * WIDTH * 4  # codes, not a copy of the rows
        url = "/v1/tables/big/neighbors"
        every = {"k_factor": 16, "nprobe": 64, "probe_margin": 2}  # every list, every candidate
        deep = client.post(url, json={"token": "w5", "k": 5, **every})
        exact = client.post(url, json={"token": "w5", "k": 5, "exact": True}).json()
        assert deep.json()["neighbors"] == exact["neighbors"]
        assert index["parameters"]["probe_margin"] == DEFAULT_PROBE_MARGIN
        nearest = client.post(url, json={"token": "w5", "k": 5, "probe_margin": 0})
        assert nearest.status_code == 200 and len(nearest.json()["neighbors"]) == 5
        for margin in (2.5, -0.1, "0.1", True):
            assert_envelope(client.post(url, json={"token": "w5", "probe_margin": margin}), 422,
                            "ValidationError")  # fmt: skip
        error = assert_envelope(client.post(url, json={"token": "w5", "k_factor": 17}), 422,
                                "LimitExceeded")  # fmt: skip
        assert "k_factor is 17, above the limit of 16" in error["message"]
        assert_envelope(client.post(url, json={"token": "w5", "ef_search": 8}), 422,
                        "InvalidQuery")  # fmt: skip
        assert_envelope(client.post(url, json={"token": "w5", "k_factor": 0}), 422,
                        "ValidationError")  # fmt: skip


def test_the_cache_holds_the_prepared_table_and_its_index(
    hnsw_client: TestClient, tmp_path: Path
) -> None:
    wait_ready(hnsw_client)
    for _ in range(100):  # the build is saved after it is attached
        entries = list((tmp_path / "cache").iterdir())
        if entries and (entries[0] / "index.json").exists():
            break
        time.sleep(0.05)
    [entry] = entries
    assert {"table.json", "vectors.npy", "index.faiss", "index.json"} <= {
        p.name for p in entry.iterdir()
    }
    reloaded = hnsw_client.post("/v1/admin/tables/big/reload", headers=ADMIN)
    assert reloaded.status_code == 200
    info = hnsw_client.get("/v1/tables/big").json()["index"]
    assert info["state"] in ("measuring", "ready") and info["source"].endswith("index.faiss")


def test_a_mismatched_index_fails_the_reload_and_the_old_table_serves(tmp_path: Path) -> None:
    path = write_clustered(tmp_path / "tables")
    index_path = tmp_path / "big.faiss"
    spec = TableSpec(name="big", path=path, vocab=path.with_suffix(".vocab"), index="ivf",
                     index_path=index_path)  # fmt: skip
    settings = Settings(tables=[spec], admin_key="admin-key", admin_tables_dir=tmp_path)
    with TestClient(create_app(settings)) as client:
        wait_ready(client)
        for _ in range(100):
            if index_path.with_suffix(".json").exists():
                break
            time.sleep(0.05)
        before = client.post("/v1/tables/big/neighbors", json={"token": "w9"}).json()
        write_clustered(tmp_path / "tables", rows=ROWS - 1, seed=1)  # the table changes
        error = assert_envelope(
            client.post("/v1/admin/tables/big/reload", headers=ADMIN), 422, "TableLoadError"
        )
        assert str(index_path) in error["message"] and "built for another table" in error["message"]
        assert client.post("/v1/tables/big/neighbors", json={"token": "w9"}).json() == before


def test_parameters_out_of_range_stop_the_load(tmp_path: Path) -> None:
    path = write_clustered(tmp_path / "tables")
    spec = TableSpec(name="big", path=path, vocab=path.with_suffix(".vocab"), index="ivf",
                     nlist=ROWS + 1)  # fmt: skip
    expected = r"index ivf: nlist 5001 lists need at least as many rows to train on"
    with (
        pytest.raises(TableLoadError, match=expected),
        TestClient(create_app(Settings(tables=[spec]))),
    ):
        pass


def test_an_unwritable_cache_directory_stops_the_load(tmp_path: Path) -> None:
    path = write_clustered(tmp_path / "tables")
    spec = TableSpec(name="big", path=path, vocab=path.with_suffix(".vocab"))
    (tmp_path / "a-file").write_text("")
    unusable = [tmp_path / "a-file" / "cache"]  # a file in the way: even root cannot
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        unusable.append(locked)
    for cache_dir in unusable:
        app = create_app(Settings(tables=[spec], cache_dir=cache_dir))
        with pytest.raises(TableLoadError, match="not writable") as caught, TestClient(app):
            pass
        assert str(cache_dir) in caught.value.message


def test_a_checkpoint_set_with_an_index_and_a_cache_directory(tmp_path: Path) -> None:
    from tests.checkpoint_sets import synthetic_rows, write_checkpoint_set

    folder = write_checkpoint_set(tmp_path / "run")
    spec = TableSpec(name="run", checkpoints=folder, index="hnsw")
    settings = Settings(tables=[spec], cache_dir=tmp_path / "cache")
    with TestClient(create_app(settings)) as client:
        info = wait_ready(client, "run")
        assert info["index"]["kind"] == "hnsw" and len(info["checkpoints"]) == 5
        answer = client.post("/v1/tables/run/neighbors", json={"token": "w3", "k": 5,
                                                                "checkpoint": 0})  # fmt: skip
        assert answer.status_code == 200
    # The first checkpoint's own exhaustive answer: the last one's index is not used for it.
    rows = synthetic_rows()[2][0].astype(np.float64)
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    scores = unit @ unit[3]
    scores[3] = -np.inf
    expected = [f"w{i}" for i in np.argsort(-scores)[:5]]
    assert [n["token"] for n in answer.json()["neighbors"]] == expected
    # A set is read from its files: the cache directory holds no prepared folder for it.
    assert not [entry for entry in (tmp_path / "cache").iterdir() if entry.is_dir()]


def test_a_spec_holds_its_rows_in_the_layout_it_names(tmp_path: Path) -> None:
    from service.engine.tables.layout import layout_of
    from service.loading.cache_dir import entry_of
    from service.loading.tables import read_spec

    path = write_clustered(tmp_path / "tables")
    common = {"path": path, "vocab": path.with_suffix(".vocab"), "index": "fastscan"}
    specs = [TableSpec(name="columns", **common), TableSpec(name="rows", layout="rows", **common)]
    cache = tmp_path / "cache"
    for cache_dir in (None, cache):
        with TestClient(create_app(Settings(tables=specs, cache_dir=cache_dir))) as client:
            for name in ("columns", "rows"):
                assert wait_ready(client, name)["index"]["state"] == "ready"
                served = client.app.state.registry.get(name)  # type: ignore[attr-defined]
                assert layout_of(served.table.vectors) == name
            for token in ("w5", "w77", "w4999"):
                for options in ({"exact": True}, {}, {"nprobe": 4, "k_factor": 2}):
                    body = {"token": token, "k": 10, **options}
                    by_columns = client.post("/v1/tables/columns/neighbors", json=body)
                    by_rows = client.post("/v1/tables/rows/neighbors", json=body)
                    assert by_columns.status_code == 200 and by_rows.json() == by_columns.json()
    # Each layout its own prepared folder in the cache; the rows one stored row after row.
    entries = {spec.name: entry_of(spec, cache) for spec in specs}
    assert entries["columns"].name.split("-")[1] != entries["rows"].name.split("-")[1]
    manifest = (entries["rows"] / "table.json").read_text()
    assert '"layout": "rows"' in manifest
    # A prepared folder keeps its layout: asking for the other one is refused, naming it.
    prepared = entries["columns"]
    with pytest.raises(TableLoadError, match="prepared by columns, not rows") as caught:
        read_spec(TableSpec(name="x", path=prepared, layout="rows"))
    assert str(prepared) in caught.value.message
    assert layout_of(read_spec(TableSpec(name="x", path=entries["rows"])).vectors) == "rows"
