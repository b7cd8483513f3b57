"""Input limits the HTTP layer enforces before any work: body size, content type, types.

tests/api/test_errors.py covers validation, limits and unknown names; these add what it lacks.
"""

from __future__ import annotations

import json
import select
import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient

from harness.server import running_server
from tests.robustness.conftest import AppFactory, assert_envelope

SMALL = "/v1/tables/small"
JSON = {"content-type": "application/json"}
LIMIT = 4096


@pytest.fixture
def client(make_client: AppFactory) -> Iterator[TestClient]:
    """The small table with a 4 KiB body limit."""
    with make_client(max_body_bytes=LIMIT) as test_client:
        yield test_client


def test_a_body_over_the_limit_is_refused_from_its_content_length(client: TestClient) -> None:
    body = b'{"vector": [' + b"0.5, " * 1000 + b"0.5]}"
    response = client.post(f"{SMALL}/neighbors", content=body, headers=JSON)
    error = assert_envelope(response, 413, "BodyTooLarge")
    assert error["limit"] == LIMIT
    assert response.headers["connection"] == "close"


def test_a_streamed_body_without_content_length_is_counted(client: TestClient) -> None:
    chunks = (b" " * 1000 for _ in range(10))  # chunked: no Content-Length at all
    response = client.post(f"{SMALL}/neighbors", content=chunks, headers=JSON)
    assert_envelope(response, 413, "BodyTooLarge")


def test_a_body_just_under_the_limit_is_served(client: TestClient) -> None:
    body = b'{"token": "king"}'
    padded = body[:-1] + b" " * (LIMIT - len(body)) + b"}"
    response = client.post(f"{SMALL}/neighbors", content=padded, headers=JSON)
    assert response.status_code == 200, response.text


def test_a_chunked_body_over_a_real_socket_is_cut_off(table_path: Path) -> None:
    """uvicorn and the real CLI: a chunked body has no Content-Length to check up front."""
    env = {
        "EMBEDDING_SERVICE_MAX_BODY_BYTES": str(LIMIT),
        "EMBEDDING_SERVICE_TABLES": json.dumps([{"name": "small", "path": str(table_path)}]),
    }
    with running_server(env) as base:
        status, body = chunked_post(base, f"{SMALL}/neighbors", 100_000)
        assert status == 413, body
        assert json.loads(body)["error"]["type"] == "BodyTooLarge"
        # The server is unharmed.
        assert chunked_post(base, f"{SMALL}/neighbors", 0, b'{"token": "king"}')[0] == 200


def chunked_post(base: str, path: str, size: int, body: bytes = b"") -> tuple[int, bytes]:
    """POST `body` then `size` spaces in 1 KB chunks (chunked encoding); status and body."""
    address = urlsplit(base)
    with socket.create_connection((address.hostname, address.port), timeout=10) as connection:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        )
        chunks = [body] if body else []
        chunks += [b" " * 1024] * (size // 1024)
        connection.sendall(head.encode())
        for chunk in chunks:
            connection.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            if select.select([connection], [], [], 0.01)[0]:
                break  # the server answered before the body ended
        else:
            connection.sendall(b"0\r\n\r\n")
        answer = read_all(connection)
    status_line, _, rest = answer.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


def read_all(connection: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    parts = []
    try:
        while part := connection.recv(65536):
            parts.append(part)
    except ConnectionResetError:
        pass  # closed with part of our body unread: what came before the reset is the answer
    return b"".join(parts)


@pytest.mark.parametrize(
    "headers",
    [{"content-type": "text/plain"}, {"content-type": "application/x-www-form-urlencoded"}, {}],
)
def test_a_body_that_is_not_declared_json_is_415(client: TestClient, headers: dict) -> None:
    for path in ("neighbors", "analogy", "lookup", "similarity", "score", "cosines", "rank"):
        response = client.post(f"{SMALL}/{path}", content=b'{"token": "king"}', headers=headers)
        assert_envelope(response, 415, "UnsupportedMediaType")


@pytest.mark.parametrize(
    "content_type",
    ["application/json; charset=utf-8", "application/vnd.api+json", "APPLICATION/JSON"],
)
def test_json_media_types_are_accepted(client: TestClient, content_type: str) -> None:
    response = client.post(
        f"{SMALL}/neighbors", content=b'{"token": "king"}', headers={"content-type": content_type}
    )
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("neighbors", {"token": "king", "k": True}),
        ("neighbors", {"token": "king", "k": 2.5}),
        ("neighbors", {"token": "king", "k": "2"}),
        ("neighbors", {"token": "king", "k": 10**30}),
        ("neighbors", {"token": "king", "restrict": 0}),
        ("neighbors", {"queries": []}),
        ("neighbors", {"queries": [{"token": "king", "colour": "red"}]}),
        ("neighbors", {"id": True}),
        ("lookup", {"tokens": ["king"], "include_vector": "yes"}),
        ("lookup", {"tokens": ["king"], "include_vector": 1}),
        ("score", {"vector": [1.0, 2.0, 3.0, 4.0], "softmax": "true"}),
        ("analogy", {"positive": [{"token": "king", "weight": 0}]}),
        ("analogy", {"positive": [{"token": "king", "vector": [1.0]}]}),
        ("similarity", {"pairs": [["king", "queen", "man"]]}),
        ("cosines", {"token": "king", "limit": True}),
        ("cosines", {"token": "king", "offset": "1"}),
        ("rank", {"token": "king", "others": ["queen"], "closer_rows": {"limit": 1.5}}),
        ("rank", {"token": "king", "others": ["queen"], "closer_rows": True}),
    ],
)
def test_wrong_types_and_shapes_are_422(client: TestClient, path: str, body: dict) -> None:
    assert_envelope(client.post(f"{SMALL}/{path}", json=body), 422, "ValidationError")


@pytest.mark.parametrize("body", [b"null", b"[]", b'"king"', b"42", b""])
def test_a_body_that_is_not_an_object_is_422(client: TestClient, body: bytes) -> None:
    response = client.post(f"{SMALL}/neighbors", content=body, headers=JSON)
    assert_envelope(response, 422, "ValidationError")


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 2000 + b"]" * 2000,  # deeper than the JSON parser's limit
        b'{"token": "\xff\xfe"}',  # not UTF-8
        b'{"token": "king",}',
        b"\x00\x01\x02",
    ],
)
def test_unparseable_bodies_are_400(make_client: AppFactory, body: bytes) -> None:
    with make_client() as client:
        response = client.post(f"{SMALL}/neighbors", content=body, headers=JSON)
    assert_envelope(response, 400, "MalformedJSON")


@pytest.mark.parametrize("literal", [b"NaN", b"Infinity", b"-Infinity"])
def test_non_finite_numbers_are_refused_in_every_vector(client: TestClient, literal: bytes) -> None:
    four = b"[0.5, 0.5, 0.5, " + literal + b"]"
    bodies = {
        "score": b'{"vector": ' + four + b"}",
        "analogy": b'{"positive": [{"vector": ' + four + b"}]}",
        "neighbors": b'{"queries": [{"vector": ' + four + b"}]}",
        "cosines": b'{"vector": ' + four + b"}",
    }
    for path, body in bodies.items():
        response = client.post(f"{SMALL}/{path}", content=body, headers=JSON)
        assert_envelope(response, 400, "MalformedJSON")


def test_configured_limits_are_422(make_client: AppFactory) -> None:
    with make_client(max_batch=2, max_exclude=1, max_matrix_tokens=2, max_k=3) as client:
        cases = [
            ("lookup", {"ids": [1, 2, 3]}),
            ("similarity", {"tokens": ["king", "queen", "man"]}),
            ("similarity", {"pairs": [["king", "queen"]] * 3}),
            ("neighbors", {"token": "king", "exclude": ["man", "woman"]}),
            ("score", {"vector": [1.0, 2.0, 3.0, 4.0], "k": 4}),
            ("rank", {"token": "king", "others": ["queen", "man", "woman"]}),
        ]
        for path, body in cases:
            assert_envelope(client.post(f"{SMALL}/{path}", json=body), 422, "LimitExceeded")


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH"])
def test_wrong_methods_are_405(client: TestClient, method: str) -> None:
    response = client.request(method, f"{SMALL}/neighbors", json={"token": "king"})
    assert_envelope(response, 405, "MethodNotAllowed")
    assert "POST" in response.headers["allow"]


def test_the_envelope_is_documented_for_every_error_status(client: TestClient) -> None:
    operation = client.get("/openapi.json").json()["paths"][
        f"{SMALL}/neighbors".replace("small", "{table}")
    ]["post"]
    for status in ("400", "401", "404", "413", "415", "422", "429", "503"):
        schema = operation["responses"][status]["content"]["application/json"]["schema"]
        assert schema == {"$ref": "#/components/schemas/ErrorResponse"}


def test_refused_requests_are_counted_under_their_route_template(client: TestClient) -> None:
    def refused() -> float:
        for line in client.get("/metrics").text.splitlines():
            if line.startswith("embedding_service_http_requests_total{") and (
                'route="/v1/tables/{table}/neighbors"' in line and 'status_class="4xx"' in line
            ):
                return float(line.rsplit(" ", 1)[1])
        return 0.0

    before = refused()
    client.post(f"{SMALL}/neighbors", content=b" " * (LIMIT + 1), headers=JSON)
    assert refused() == before + 1
