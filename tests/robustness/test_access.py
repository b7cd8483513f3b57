"""Access control: API keys, the admin key, which paths stay open, and CORS."""

from __future__ import annotations

import json
import logging
import signal
import time
from pathlib import Path

import pytest

from service.api.edge import matches
from service.api.keys import NoUsableKey, read_keys
from tests.robustness.conftest import AppFactory, assert_envelope
from tests.robustness.servers import call, server_process
from tests.robustness.test_reload import wait_for

NEIGHBORS = "/v1/tables/small/neighbors"
QUERY = {"token": "king", "k": 1}


def bearer(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


def test_without_keys_everything_is_open_and_admin_does_not_exist(make_client: AppFactory) -> None:
    with make_client() as client:
        assert client.post(NEIGHBORS, json=QUERY).status_code == 200
        assert_envelope(
            client.post("/v1/admin/tables/small/reload"), 404, "AdminOff"
        )  # and says why
        assert "/v1/admin/tables" not in client.get("/openapi.json").json()["paths"]


def test_a_missing_key_is_401_with_a_challenge(make_client: AppFactory) -> None:
    with make_client(api_keys=["alpha", "beta"]) as client:
        for response in (client.post(NEIGHBORS, json=QUERY), client.get("/v1/tables")):
            assert_envelope(response, 401, "Unauthorized")
            assert response.headers["www-authenticate"] == 'Bearer realm="embedding-service"'
        # Unknown paths too: nothing about the API is told without a key.
        assert client.get("/v2/nothing").status_code == 401


@pytest.mark.parametrize(
    "header", ["Bearer gamma", "Bearer alph", "Bearer alphaa", "Basic alpha", "Bearer ", "alpha"]
)
def test_a_wrong_key_is_401_invalid_token(make_client: AppFactory, header: str) -> None:
    with make_client(api_keys=["alpha", "beta"]) as client:
        response = client.post(NEIGHBORS, json=QUERY, headers={"authorization": header})
    assert_envelope(response, 401, "Unauthorized")
    assert 'error="invalid_token"' in response.headers["www-authenticate"]


def test_every_configured_key_opens_the_api(make_client: AppFactory) -> None:
    with make_client(api_keys=["alpha", "beta"]) as client:
        for key in ("alpha", "beta"):
            assert client.post(NEIGHBORS, json=QUERY, headers=bearer(key)).status_code == 200
        lowercase = {"authorization": "bearer alpha"}
        assert client.post(NEIGHBORS, json=QUERY, headers=lowercase).status_code == 200


def test_keys_can_come_from_a_file(make_client: AppFactory, tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    keys.write_text("# service keys\nfrom-file-1\n\n  S3cr#tPart  \n   # rotated in May\n")
    # '#' starts a comment only at the start of a line: inside a key it is part of the key.
    assert read_keys(keys) == ["from-file-1", "S3cr#tPart"]
    with make_client(api_keys=["inline"], api_keys_file=keys) as client:
        for key in ("inline", "from-file-1", "S3cr#tPart"):
            assert client.post(NEIGHBORS, json=QUERY, headers=bearer(key)).status_code == 200
        for wrong in ("S3cr", "# service keys", "# rotated in May"):
            assert client.post(NEIGHBORS, json=QUERY, headers=bearer(wrong)).status_code == 401


@pytest.mark.parametrize(
    "settings",
    [
        {"api_keys": [""]},
        {"api_keys": ["   "]},
        {"api_keys": ["good", ""]},
        {"api_keys_file": "EMPTY"},
        {"api_keys_file": "COMMENTS"},
        {"admin_key": ""},
        {"admin_key_file": "EMPTY"},
    ],
)
def test_a_key_source_without_a_usable_key_refuses_to_start(
    make_client: AppFactory, tmp_path: Path, settings: dict
) -> None:
    (tmp_path / "EMPTY").write_text("")
    (tmp_path / "COMMENTS").write_text("# only a comment\n\n")
    given = {k: tmp_path / v if k.endswith("_file") else v for k, v in settings.items()}
    with pytest.raises(NoUsableKey), make_client(**given):
        pass


def test_the_number_of_keys_is_logged_never_the_keys(
    make_client: AppFactory, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        caplog.at_level(logging.INFO, logger="service.access"),
        make_client(api_keys=["alpha-secret", "beta-secret"], admin_key="root-secret"),
    ):
        pass
    assert "2 API key(s), 1 admin key(s)" in caplog.text
    assert "secret" not in caplog.text


def test_the_openapi_document_declares_the_bearer_scheme_where_a_key_is_needed(
    make_client: AppFactory,
) -> None:
    with make_client(api_keys=["alpha"], admin_key="root") as client:
        document = client.get("/openapi.json", headers=bearer("alpha")).json()
    assert document["components"]["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
    }
    paths = document["paths"]
    assert paths["/v1/tables/{table}/neighbors"]["post"]["security"] == [{"bearer": []}]
    assert paths["/v1/admin/tables"]["post"]["security"] == [{"bearer": []}]
    assert "security" not in paths["/healthz"]["get"]
    assert "security" not in paths["/metrics"]["get"]
    with make_client(admin_key="root") as client:  # no API keys: queries open, admin not
        document = client.get("/openapi.json").json()
    assert "security" not in document["paths"]["/v1/tables/{table}/neighbors"]["post"]
    assert document["paths"]["/v1/admin/tables"]["post"]["security"] == [{"bearer": []}]


def test_health_and_readiness_stay_open_and_metrics_is_configurable(
    make_client: AppFactory,
) -> None:
    with make_client(api_keys=["alpha"]) as client:
        assert client.get("/healthz").status_code == 200
        assert client.get("/readyz").status_code == 200
        assert client.get("/metrics").status_code == 200
    with make_client(api_keys=["alpha"], metrics_require_key=True) as client:
        assert_envelope(client.get("/metrics"), 401, "Unauthorized")
        assert client.get("/metrics", headers=bearer("alpha")).status_code == 200
        assert client.get("/readyz").status_code == 200


def test_admin_needs_the_admin_key_and_not_an_api_key(make_client: AppFactory) -> None:
    reload = "/v1/admin/tables/small/reload"
    with make_client(api_keys=["alpha"], admin_key="root-key") as client:
        assert_envelope(client.post(reload), 401, "Unauthorized")
        assert_envelope(client.post(reload, headers=bearer("alpha")), 401, "Unauthorized")
        assert client.post(reload, headers=bearer("root-key")).status_code == 200
        # The admin key also opens the query API.
        assert client.post(NEIGHBORS, json=QUERY, headers=bearer("root-key")).status_code == 200


def test_admin_key_from_a_file(make_client: AppFactory, tmp_path: Path) -> None:
    (tmp_path / "admin").write_text("file-admin-key\n")
    with make_client(admin_key_file=tmp_path / "admin") as client:
        # No API keys: queries are open, admin is not.
        assert client.post(NEIGHBORS, json=QUERY).status_code == 200
        assert client.post("/v1/admin/tables/small/reload").status_code == 401
        response = client.post("/v1/admin/tables/small/reload", headers=bearer("file-admin-key"))
        assert response.status_code == 200


def test_comparison_checks_every_key_in_constant_time() -> None:
    keys = (b"alpha", b"beta")
    assert matches(b"beta", keys) and not matches(b"bet", keys) and not matches(b"", keys)
    assert not matches(b"alpha", ())


def test_cors_is_off_by_default(make_client: AppFactory) -> None:
    origin = {"origin": "https://app.example.com"}
    with make_client() as client:
        response = client.post(NEIGHBORS, json=QUERY, headers=origin)
        assert "access-control-allow-origin" not in response.headers
        preflight = client.options(
            NEIGHBORS, headers={**origin, "access-control-request-method": "POST"}
        )
        assert "access-control-allow-origin" not in preflight.headers


def test_cors_allows_configured_origins_only(make_client: AppFactory) -> None:
    allowed = {"origin": "https://app.example.com", "access-control-request-method": "POST"}
    other = {**allowed, "origin": "https://evil.example.com"}
    with make_client(cors_origins=["https://app.example.com"], api_keys=["alpha"]) as client:
        # The preflight carries no key; it must pass without one.
        preflight = client.options(NEIGHBORS, headers=allowed)
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "https://app.example.com"
        assert "authorization" in preflight.headers["access-control-allow-headers"].lower()
        assert client.options(NEIGHBORS, headers=other).status_code == 400
        response = client.post(
            NEIGHBORS, json=QUERY, headers={"origin": allowed["origin"], **bearer("alpha")}
        )
        assert response.headers["access-control-allow-origin"] == "https://app.example.com"


def test_cached_answers_are_not_served_without_a_key(make_client: AppFactory) -> None:
    # The response cache sits inside access control: a cached body needs a key like any other.
    with make_client(api_keys=["alpha"]) as client:
        first = client.post(NEIGHBORS, json=QUERY, headers=bearer("alpha"))
        again = client.post(NEIGHBORS, json=QUERY, headers=bearer("alpha"))
        assert first.status_code == again.status_code == 200
        assert first.content == again.content
        assert_envelope(client.post(NEIGHBORS, json=QUERY), 401, "Unauthorized")
        assert_envelope(
            client.post(NEIGHBORS, json=QUERY, headers=bearer("wrong")), 401, "Unauthorized"
        )


def keys_file_env(table_path: Path, keys: Path, **more: str) -> dict[str, str]:
    """A server of the small table whose API keys are read from `keys`, which holds "old-key"."""
    keys.write_text("old-key\n")
    return {
        "EMBEDDING_SERVICE_TABLES": json.dumps([{"name": "small", "path": str(table_path)}]),
        "EMBEDDING_SERVICE_API_KEYS_FILE": str(keys),
        **more,
    }


@pytest.mark.slow
def test_sighup_rereads_the_key_files_and_keeps_the_old_keys_if_one_empties(
    table_path: Path, tmp_path: Path
) -> None:
    keys = tmp_path / "keys"
    with server_process(keys_file_env(table_path, keys)) as (process, base):
        url = f"{base}{NEIGHBORS}"
        assert call(url, QUERY, bearer("old-key"))[0] == 200
        keys.write_text("new-key\n")
        process.send_signal(signal.SIGHUP)
        assert wait_for(lambda: call(url, QUERY, bearer("new-key"))[0] == 200)
        assert call(url, QUERY, bearer("old-key"))[0] == 401
        keys.write_text("# emptied by mistake\n")
        process.send_signal(signal.SIGHUP)
        time.sleep(1)
        assert call(url, QUERY, bearer("new-key"))[0] == 200  # fails closed: old keys stay
        assert call(url, QUERY)[0] == 401


@pytest.mark.slow
def test_sigusr1_rotates_the_keys_of_every_worker_without_reloading_a_table(
    table_path: Path, tmp_path: Path
) -> None:
    keys = tmp_path / "keys"
    env = keys_file_env(table_path, keys, EMBEDDING_SERVICE_WORKERS="2")
    with server_process(env) as (process, base):
        url = f"{base}{NEIGHBORS}"
        table = f"{base}/v1/tables/small"
        loaded = {call(table, headers=bearer("old-key"))[1]["loaded_at"] for _ in range(20)}
        keys.write_text("new-key\n")
        process.send_signal(signal.SIGUSR1)  # to the supervisor, which passes it on
        # Each request is a new connection, taken by either worker: 20 in a row say both rotated.
        assert wait_for(
            lambda: all(call(url, QUERY, bearer("new-key"))[0] == 200 for _ in range(20))
        )
        assert {call(url, QUERY, bearer("old-key"))[0] for _ in range(20)} == {401}
        after = {call(table, headers=bearer("new-key"))[1]["loaded_at"] for _ in range(20)}
        assert after == loaded  # the same loads: no table was read again
        assert process.poll() is None
