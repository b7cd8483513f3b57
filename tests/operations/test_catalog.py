"""The operation catalogue: each operation's list bounds, read from its body's JSON Schema."""

from __future__ import annotations

from service.operations.catalog import OPERATIONS


def test_the_bounds_come_from_every_body_the_schema_admits() -> None:
    assert OPERATIONS["neighbors"].most_items["queries"] == 10_000  # the batch form
    assert OPERATIONS["neighbors"].most_items["vector"] == 65_536  # the single form
    assert "analogies" not in OPERATIONS["evaluate"].most_items  # a string, not a list
