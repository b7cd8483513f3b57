"""Validation is bounded before it is paid: an overlong list is refused without validating its
items, and a body of more JSON values than max_body_values is refused before it is parsed
(each would otherwise cost seconds of the event loop and hundreds of MiB)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from service.config import Settings
from service.operations.catalog import OPERATIONS
from service.operations.door import values
from tests.robustness.conftest import AppFactory, assert_envelope

SMALL = "/v1/tables/small"
JSON = {"content-type": "application/json"}


@pytest.fixture
def client(make_client: AppFactory) -> Iterator[TestClient]:
    with make_client(max_body_bytes=8 * 2**20) as test_client:
        yield test_client


@pytest.fixture
def roomy(make_client: AppFactory) -> Iterator[TestClient]:
    """Room for a million values: the list bounds are checked on parsed bodies."""
    with make_client(max_body_bytes=8 * 2**20, max_body_values=2**24) as test_client:
        yield test_client


@pytest.mark.parametrize(
    ("operation", "field", "item"),
    [
        ("tokenize", "detokenize", True),  # a million invalid items, each an error dict of old
        ("trajectory", "tokens", None),
        ("neighbors", "queries", 1),
        ("similarity", "pairs", [1]),
        ("project", "vectors", []),
        ("rank", "others", 1),
        ("cosines", "positive", {}),
    ],
)
def test_an_overlong_list_is_one_error_whatever_its_items(
    roomy: TestClient, operation: str, field: str, item: object
) -> None:
    most = OPERATIONS[operation].most_items[field]
    body = json.dumps({field: [item] * (most + 1)})
    response = roomy.post(f"{SMALL}/{operation}", content=body, headers=JSON)
    error = assert_envelope(response, 422, "ValidationError")
    assert error["errors"] == [
        {
            "loc": [field],
            "msg": f"List should have at most {most} items after validation, not {most + 1}",
            "type": "too_long",
        }
    ]


def test_a_list_within_its_bound_is_still_validated_and_stops_at_its_first_bad_item(
    client: TestClient,
) -> None:
    response = client.post(
        f"{SMALL}/lookup", content=json.dumps({"ids": [1, True, "2"]}), headers=JSON
    )
    error = assert_envelope(response, 422, "ValidationError")
    assert [problem["loc"] for problem in error["errors"]] == [["ids", 1]]


# Lists of bad items a setting bounds far below the schema (max_batch 256 against 10,000; a
# vector of 65,536 against the table's width): each once cost 40-800 ms of event loop for an
# error per item, or two for a union (a Key, a term). At most one error is built now.
@pytest.mark.parametrize(
    ("operation", "body"),
    [
        ("lookup", {"tokens": [1] * 10_000}),
        ("analogy", {"positive": [1] * 10_000}),
        ("neighbors", {"vector": ["x"] * 65_536}),
        ("score", {"vector": ["x"] * 65_536}),
        ("neighbors", {"queries": [{"token": 1}] * 10_000}),
        ("diagnostics", {"tokens": [1] * 10_000}),
        ("cosines", {"vector": ["x"] * 65_536}),
        ("cosines", {"positive": [1] * 10_000}),
        ("rank", {"token": "king", "others": [1] * 10_000}),
    ],
)
def test_a_list_of_bad_items_costs_one_error(
    client: TestClient, operation: str, body: dict[str, object]
) -> None:
    response = client.post(f"{SMALL}/{operation}", content=json.dumps(body), headers=JSON)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert len(error.get("errors", [])) <= 1, error


@pytest.mark.parametrize(
    ("operation", "body", "what"),
    [
        ("neighbors", {"queries": [{"token": "king"}] * 257}, "batch size"),
        ("analogy", {"queries": [{"positive": [{"token": "king"}] * 17}]}, "analogy terms"),
        ("analogy", {"positive": [{"token": "king"}] * 17}, "analogy terms"),
        ("neighbors", {"queries": [{"token": "king", "exclude": ["a"] * 1001}]}, "exclusions"),
        ("lookup", {"ids": [True] * 257}, "batch size"),
        ("tokenize", {"detokenize": [True] * 10_001}, "ids to detokenize"),
        ("cosines", {"positive": [{"token": "king"}] * 17}, "analogy terms"),
        ("rank", {"token": "king", "others": [True] * 257}, "batch size"),
    ],
)
def test_a_list_over_its_setting_is_refused_before_its_items_are_validated(
    client: TestClient, operation: str, body: dict[str, object], what: str
) -> None:
    # The items are valid or not; either way the answer is the limit, as after validation.
    response = client.post(f"{SMALL}/{operation}", content=json.dumps(body), headers=JSON)
    error = assert_envelope(response, 422, "LimitExceeded")
    assert error["message"].startswith(what), error


MOST = Settings().max_body_values


@pytest.mark.parametrize(
    ("operation", "items"),
    [
        ("neighbors", b'{"queries": [' + b"{}," * MOST + b"{}]}"),  # objects
        ("tokenize", b'{"detokenize": [' + b'"a",' * MOST + b'"a"]}'),  # one-letter strings
        ("tokenize", b'{"detokenize": [' + b"1," * MOST + b"1]}"),  # numbers (valid ids)
        ("neighbors", b'{"vector": [' + b"0.5," * MOST + b"0.5]}"),  # one vector
    ],
)
def test_a_body_of_too_many_values_is_refused_before_it_is_parsed(
    client: TestClient, operation: str, items: bytes
) -> None:
    response = client.post(f"{SMALL}/{operation}", content=items, headers=JSON)
    error = assert_envelope(response, 413, "TooManyValues")
    assert error["limit"] == MOST
    assert client.get("/healthz").status_code == 200


def test_a_body_at_the_limit_is_parsed_and_one_more_value_is_not(client: TestClient) -> None:
    body = b'{"detokenize": [' + b"1," * (MOST - 3) + b"1]}"  # the object, the list, its items
    assert values(body, MOST) == MOST
    response = client.post(f"{SMALL}/tokenize", content=body, headers=JSON)
    error = assert_envelope(response, 422, "LimitExceeded")  # parsed: max_batch said no
    assert error["got"] == MOST - 2
    longer = body.replace(b"[", b"[1,", 1)
    assert_envelope(
        client.post(f"{SMALL}/tokenize", content=longer, headers=JSON), 413, "TooManyValues"
    )


def test_commas_and_brackets_inside_strings_are_not_values(client: TestClient) -> None:
    text = "{[," * MOST + '\\"{,'
    body = json.dumps({"texts": [text, "[", "\\", ","], "nested": [[{}]]}).encode()
    assert values(body, MOST) == 10  # the document, its two members, 4 texts, 3 nested
    response = client.post(f"{SMALL}/tokenize", content=json.dumps({"text": text}), headers=JSON)
    assert response.status_code != 413, response.text
