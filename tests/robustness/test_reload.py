"""Hot reload: tables are reloaded or added while queries keep being answered.

A reload swaps the new table in only once it is indexed; a corrupt file fails with a clear
error and the old table keeps serving; readiness stays 200 throughout.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from tests.conftest import small_vectors
from tests.robustness.conftest import (
    AppFactory,
    assert_envelope,
    counted_while_running,
    write_table,
)
from tests.robustness.servers import call, server_process

ADMIN = {"authorization": "Bearer admin-key"}
RELOAD = "/v1/admin/tables/small/reload"
QUERY = {"token": "king", "k": 1}


@contextmanager
def concurrent_queries(client: TestClient, table: str = "small") -> Iterator[Counter[str]]:
    """Query `table` and readiness from 4 threads until the block ends; count the outcomes."""

    def query() -> list[str]:
        answer = client.post(f"/v1/tables/{table}/neighbors", json=QUERY)
        ready = client.get("/readyz")
        return [f"query {answer.status_code}", f"readyz {ready.status_code}"]

    with counted_while_running(query, 4) as outcomes:
        yield outcomes


def nearest(client: TestClient) -> str:
    """The nearest neighbour of 'king' in the small table."""
    answer = client.post("/v1/tables/small/neighbors", json=QUERY)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["neighbors"][0]["token"])


def test_reloads_under_load_never_fail_a_query(make_client: AppFactory, table_path: Path) -> None:
    with make_client(admin_key="admin-key") as client:
        before = nearest(client)
        loaded_at = client.get("/v1/tables/small").json()["loaded_at"]
        with concurrent_queries(client) as outcomes:
            for _ in range(10):
                assert client.post(RELOAD, headers=ADMIN).status_code == 200
        assert client.get("/v1/tables/small").json()["loaded_at"] > loaded_at
        assert nearest(client) == before
    assert set(outcomes) == {"query 200", "readyz 200"}, outcomes
    assert outcomes["query 200"] > 20


def test_a_reload_serves_the_new_file_not_cached_answers(
    make_client: AppFactory, table_path: Path
) -> None:
    with make_client(admin_key="admin-key") as client:
        before = nearest(client)  # now cached under the table's load time
        vectors = small_vectors()
        king, other = 2, 6  # rows of 'king' and 'apple'
        vectors[other] = vectors[king] * 2  # same direction: apple becomes king's nearest
        write_table(table_path.parent, vectors)
        assert client.post(RELOAD, headers=ADMIN).status_code == 200
        assert (before, nearest(client)) == ("King", "apple")


def test_the_table_version_names_the_content_not_the_load(
    make_client: AppFactory, table_path: Path
) -> None:
    def versions(client: TestClient) -> set[str]:
        answer = client.post("/v1/tables/small/neighbors", json=QUERY)
        return {answer.headers["table-version"], client.get("/v1/tables/small").json()["version"]}

    with make_client(admin_key="admin-key") as client:
        (first,) = versions(client)
        assert client.post(RELOAD, headers=ADMIN).status_code == 200
        assert versions(client) == {first}  # the same rows loaded again: the same version
        vectors = small_vectors()
        vectors[6] = vectors[6] * 1.5  # one row changed (its norm with it)
        write_table(table_path.parent, vectors)
        assert client.post(RELOAD, headers=ADMIN).status_code == 200
        (second,) = versions(client)
    with make_client(admin_key="admin-key") as client:  # another process of the same files
        assert versions(client) == {second} != {first}


def test_a_corrupt_file_fails_clearly_and_the_old_table_keeps_serving(
    make_client: AppFactory, table_path: Path
) -> None:
    with make_client(admin_key="admin-key") as client:
        before = nearest(client)
        info = client.get("/v1/tables/small").json()
        with concurrent_queries(client) as outcomes:
            for garbage in (b"\x93NUMPY garbage", b"", table_path.read_bytes()[:100]):
                table_path.write_bytes(garbage)
                error = assert_envelope(client.post(RELOAD, headers=ADMIN), 422, "TableLoadError")
                assert str(table_path) in error["message"]
            table_path.unlink()
            error = assert_envelope(client.post(RELOAD, headers=ADMIN), 422, "TableLoadError")
        assert client.get("/v1/tables/small").json() == info
        assert nearest(client) == before
        assert client.get("/readyz").json() == {"status": "ready", "tables": ["small"]}
    assert set(outcomes) == {"query 200", "readyz 200"}, outcomes


def test_reloading_an_unknown_table_is_404(make_client: AppFactory) -> None:
    with make_client(admin_key="admin-key") as client:
        response = client.post("/v1/admin/tables/nope/reload", headers=ADMIN)
    assert_envelope(response, 404, "UnknownTable")


def test_a_table_is_added_under_load(make_client: AppFactory, tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    path = write_table(tmp_path / "new", rng.normal(size=(40, 8)).astype(np.float32), "wide")
    with make_client(admin_key="admin-key") as client, concurrent_queries(client) as outcomes:
        spec = {"name": "wide", "path": str(path), "case_insensitive": True}
        response = client.post("/v1/admin/tables", json=spec, headers=ADMIN)
        assert response.status_code == 201, response.text
        assert (response.json()["rows"], response.json()["width"]) == (40, 8)
        answer = client.post("/v1/tables/wide/neighbors", json={"token": "KING", "k": 2})
        assert answer.json()["matched"] == {"KING": "King"}
        again = client.post("/v1/admin/tables", json=spec, headers=ADMIN)
        assert_envelope(again, 409, "TableExists")
        assert client.get("/readyz").json()["tables"] == ["small", "wide"]
        # An added table can be reloaded like a configured one.
        assert client.post("/v1/admin/tables/wide/reload", headers=ADMIN).status_code == 200
    assert set(outcomes) == {"query 200", "readyz 200"}, outcomes


def test_a_failed_add_leaves_nothing_behind(make_client: AppFactory, tmp_path: Path) -> None:
    (tmp_path / "bad.txt").write_text("3 2\nfoo 1 2\n")
    with make_client(admin_key="admin-key") as client:
        spec = {"name": "bad", "path": str(tmp_path / "bad.txt")}
        error = assert_envelope(
            client.post("/v1/admin/tables", json=spec, headers=ADMIN), 422, "TableLoadError"
        )
        assert "truncated" in error["message"]
        assert client.get("/readyz").json() == {"status": "ready", "tables": ["small"]}
        assert_envelope(client.post("/v1/tables/bad/neighbors", json=QUERY), 404, "UnknownTable")


def test_added_tables_must_live_under_the_admin_directory(
    make_client: AppFactory, table_path: Path, tmp_path: Path
) -> None:
    allowed = tmp_path / "allowed"
    inside = write_table(allowed, small_vectors(), "inside")
    with make_client(admin_key="admin-key", admin_tables_dir=allowed) as client:
        outside = {"name": "outside", "path": str(table_path)}
        error = assert_envelope(
            client.post("/v1/admin/tables", json=outside, headers=ADMIN), 422, "TableLoadError"
        )
        assert "admin tables directory" in error["message"]
        sneaky = {"name": "sneaky", "path": str(allowed / ".." / "tables" / "small.npy")}
        assert client.post("/v1/admin/tables", json=sneaky, headers=ADMIN).status_code == 422
        device = {"name": "zero", "path": "/dev/zero", "format": "npy"}
        assert client.post("/v1/admin/tables", json=device, headers=ADMIN).status_code == 422
        inside_spec = {"name": "inside", "path": str(inside)}
        assert client.post("/v1/admin/tables", json=inside_spec, headers=ADMIN).status_code == 201


def test_devices_and_pipes_are_never_loaded(make_client: AppFactory, tmp_path: Path) -> None:
    pipe = tmp_path / "pipe.npy"
    os.mkfifo(pipe)  # inside the tables directory: reading it would block forever
    with make_client(admin_key="admin-key", admin_tables_dir=tmp_path) as client:
        for path, problem in [(pipe, "not a regular file"), ("/dev/zero", "not under")]:
            table = {"name": "zero", "path": str(path), "format": "npy"}
            error = assert_envelope(
                client.post("/v1/admin/tables", json=table, headers=ADMIN), 422, "TableLoadError"
            )
            assert problem in error["message"]


@pytest.mark.slow
def test_sighup_reloads_in_the_background_and_survives_a_corrupt_file(table_path: Path) -> None:
    env = {"EMBEDDING_SERVICE_TABLES": json.dumps([{"name": "small", "path": str(table_path)}])}
    with server_process(env) as (process, base):
        info = f"{base}/v1/tables/small"
        first = call(info)[1]["loaded_at"]
        vectors = small_vectors()
        vectors[6] = vectors[2] * 2
        write_table(table_path.parent, vectors)
        process.send_signal(signal.SIGHUP)
        assert wait_for(lambda: call(info)[1]["loaded_at"] != first)
        assert call(f"{info}/neighbors", QUERY)[1]["neighbors"][0]["token"] == "apple"
        second = call(info)[1]["loaded_at"]
        table_path.write_bytes(b"garbage")
        process.send_signal(signal.SIGHUP)
        time.sleep(1.0)
        assert process.poll() is None
        assert call(info)[1]["loaded_at"] == second
        assert call(f"{info}/neighbors", QUERY)[1]["neighbors"][0]["token"] == "apple"
        assert call(f"{base}/readyz")[0] == 200


def wait_for(condition: Callable[[], bool], seconds: float = 15) -> bool:
    """Poll `condition` until it holds or `seconds` pass."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False
