"""The door: the bound on a body's JSON values, read from its bytes before it is parsed."""

from __future__ import annotations

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from service.operations.door import values

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
