"""Validation is bounded before it is paid: an overlong list is refused without validating its
items, and a body of more JSON objects and arrays than any request needs is refused before it
is parsed (each would otherwise cost seconds of the event loop and hundreds of MiB)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from service.operations.catalog import OPERATIONS
from service.operations.door import MAX_CONTAINERS, containers
from tests.robustness.conftest import AppFactory, assert_envelope

SMALL = "/v1/tables/small"
JSON = {"content-type": "application/json"}


@pytest.fixture
def client(make_client: AppFactory) -> Iterator[TestClient]:
    with make_client(max_body_bytes=8 * 2**20) as test_client:
        yield test_client


@pytest.mark.parametrize(
    ("operation", "field", "item"),
    [
        ("tokenize", "detokenize", True),  # a million invalid items, each an error dict of old
        ("trajectory", "tokens", None),
        ("neighbors", "queries", 1),
        ("similarity", "pairs", [1]),
        ("project", "vectors", []),
    ],
)
def test_an_overlong_list_is_one_error_whatever_its_items(
    client: TestClient, operation: str, field: str, item: object
) -> None:
    most = OPERATIONS[operation].most_items[field]
    body = json.dumps({field: [item] * (most + 1)})
    response = client.post(f"{SMALL}/{operation}", content=body, headers=JSON)
    error = assert_envelope(response, 422, "ValidationError")
    assert error["errors"] == [
        {
            "loc": [field],
            "msg": f"List should have at most {most} items after validation, not {most + 1}",
            "type": "too_long",
        }
    ]


def test_a_list_within_its_bound_is_still_validated_item_by_item(client: TestClient) -> None:
    response = client.post(
        f"{SMALL}/lookup", content=json.dumps({"ids": [True, "2"]}), headers=JSON
    )
    error = assert_envelope(response, 422, "ValidationError")
    assert [problem["loc"] for problem in error["errors"]] == [["ids", 0], ["ids", 1]]


def test_the_bounds_come_from_every_body_the_schema_admits() -> None:
    assert OPERATIONS["neighbors"].most_items["queries"] == 10_000  # the batch form
    assert OPERATIONS["neighbors"].most_items["vector"] == 65_536  # the single form
    assert "analogies" not in OPERATIONS["evaluate"].most_items  # a string, not a list


def test_a_body_of_too_many_objects_is_refused_before_it_is_parsed(client: TestClient) -> None:
    body = b'{"queries": [' + b"{}," * MAX_CONTAINERS + b"{}]}"
    response = client.post(f"{SMALL}/neighbors", content=body, headers=JSON)
    error = assert_envelope(response, 413, "TooManyValues")
    assert error["limit"] == MAX_CONTAINERS
    assert client.get("/healthz").status_code == 200


def test_brackets_inside_strings_are_not_containers(client: TestClient) -> None:
    text = "{[" * MAX_CONTAINERS + '\\"{'
    body = json.dumps({"texts": [text, "[", "\\"], "nested": [[{}]]}).encode()
    assert containers(body) == 5  # the object, texts, nested, its list, its object
    response = client.post(f"{SMALL}/tokenize", content=json.dumps({"text": text}), headers=JSON)
    assert response.status_code != 413, response.text
