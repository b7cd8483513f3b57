"""The door: the bound on a body's JSON values read from its bytes, and the answer cache's key,
a digest of the table's load, the operation and the validated query in canonical form."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.config import Settings
from service.loading.registry import Registry
from service.operations.catalog import ANALOGY, NEIGHBORS, OPERATIONS
from service.operations.door import Services, cache_key, read_query, values
from service.operations.limits import Limits
from service.runtime.runtime import Runtime
from tests.query_pairs import INDEXED, Body, cached_fields, pair_of

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.text(alphabet='",[]{}\\ab\n\u00e9'),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(alphabet='",[{\\a'), inner, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_the_count_is_one_per_value_past_the_first_of_each_container(document: object) -> None:
    def expected(value: object) -> int:
        if isinstance(value, list | dict):
            items = value.values() if isinstance(value, dict) else value
            return 1 + sum(expected(item) for item in items)
        return 1

    body = orjson.dumps(document)
    # The count is exact for the marks outside strings: commas and opening brackets, plus one.
    # An empty container holds no value after its bracket, so the bound is over by one each.
    empties = _empty_containers(document)
    assert values(body, 0) == expected(document) + empties
    assert values(body, 10**9) >= values(body, 0)  # the quick count never under-counts


def _empty_containers(value: object) -> int:
    if isinstance(value, list | dict):
        items = list(value.values() if isinstance(value, dict) else value)
        return (not items) + sum(_empty_containers(item) for item in items)
    return 0


@pytest.fixture(scope="module")
def services(settings: Settings, registry: Registry) -> Services:
    """What the door needs, over the shared tables (no runtime started: no query is run)."""
    return Services(registry, Limits(settings), Runtime(settings))


def key_of(services: Services, operation: str, table: str, body: bytes | Body) -> bytes:
    """The cache key the door makes of a request's body, read and validated as the door does."""
    raw = body if isinstance(body, bytes) else orjson.dumps(body)
    context, query = read_query(OPERATIONS[operation], table, raw, "application/json", services)
    return cache_key(OPERATIONS[operation], query, context)


@pytest.mark.parametrize(("operation", "model", "field"), cached_fields())
def test_requests_one_field_apart_have_keys_apart(
    services: Services, operation: str, model: str, field: str
) -> None:
    pair = pair_of(operation, model, field)
    table = "minilm" if pair.table in INDEXED else pair.table  # the key is the query's
    for first, second in pair.candidates:
        assert key_of(services, operation, table, first) != key_of(
            services, operation, table, second
        )


def test_one_query_however_its_body_is_written_has_one_key(services: Services) -> None:
    """Whitespace, key order, escapes and defaults spelled out are the same validated query."""
    bodies = [
        b'{"token": "lisbon", "k": 4}',
        b'{"k": 4, "token": "lisbon"}',
        b'{"token": "\\u006cisbon", "k": 4}',
        b' \n{"token":"lisbon","k":4}\t' + b" " * 10_000,
        b'{"token": "lisbon", "k": 4, "exclude": [], "restrict": null, "pieces": "one",'
        b' "exact": false, "checkpoint": null, "among": null}',
    ]
    assert len({key_of(services, "neighbors", "minilm", body) for body in bodies}) == 1
    batches = [b'{"queries": [{"token": "lisbon"}]}', b'{ "queries" : [ { "token" : "lisbon" } ] }']
    assert len({key_of(services, "neighbors", "minilm", body) for body in batches}) == 1


def test_the_key_tells_tables_loads_and_operations_apart(services: Services) -> None:
    context, query = read_query(
        NEIGHBORS, "small", b'{"token": "king", "k": 2}', "application/json", services
    )
    served = context.served
    later = replace(served, loaded_at=served.loaded_at + timedelta(microseconds=1))
    other = replace(served, name="other")
    keys = {
        cache_key(NEIGHBORS, query, context),
        cache_key(NEIGHBORS, query, replace(context, served=later)),
        cache_key(NEIGHBORS, query, replace(context, served=other)),
        cache_key(ANALOGY, query, context),
    }
    assert len(keys) == 4
