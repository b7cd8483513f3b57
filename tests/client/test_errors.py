"""The error envelope as typed exceptions: each type the server answers, with its details."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import numpy as np
import pytest

from embedding_service import Client, Text
from embedding_service import errors as e
from harness.server import free_port, running_server
from tests.client.helpers import minilm_table

pytestmark = pytest.mark.slow


def raised(call: object) -> e.ServiceError:
    """The ServiceError a call raises."""
    with pytest.raises(e.ServiceError) as caught:
        call()  # type: ignore[operator]
    return caught.value


def test_unknown_tokens_are_all_named_even_across_chunks(sync_client: Client) -> None:
    error = raised(lambda: sync_client.neighbors("minilm", ["king", "qqzx", "zzqx"]))
    assert isinstance(error, e.UnknownToken) and error.status == 404
    assert error.tokens == ["qqzx", "zzqx"]
    many = ["king"] * 300 + ["qqzx"]  # the unknown one is in the second chunk
    assert raised(lambda: sync_client.lookup("minilm", many)).tokens == ["qqzx"]  # type: ignore[attr-defined]


def test_unknown_ids_tables_and_checkpoints(sync_client: Client) -> None:
    error = raised(lambda: sync_client.lookup("minilm", ids=[3, 10**9]))
    assert isinstance(error, e.UnknownId) and error.ids == [10**9]
    table = raised(lambda: sync_client.neighbors("nope", "king"))
    assert isinstance(table, e.UnknownTable)
    assert table.available == ["minilm", "small", "run", "wordllama"]
    checkpoint = raised(lambda: sync_client.neighbors("run", "w0", checkpoint=9))
    assert isinstance(checkpoint, e.UnknownCheckpoint) and checkpoint.details["checkpoints"] == 5
    assert isinstance(table, e.NotFound) and isinstance(checkpoint, e.NotFound)


def test_limits_validation_and_vectors(sync_client: Client) -> None:
    limit = raised(lambda: sync_client.neighbors("minilm", "king", 5000))
    assert isinstance(limit, e.LimitExceeded) and (limit.limit, limit.got) == (1000, 5000)
    invalid = raised(lambda: sync_client.neighbors("minilm", "king", 0))
    assert isinstance(invalid, e.ValidationError) and invalid.errors[0]["loc"][-1] == "k"
    width = raised(lambda: sync_client.neighbors("minilm", np.ones(3, np.float32)))
    assert isinstance(width, e.DimensionMismatch) and width.details == {"expected": 384, "got": 3}
    nan = np.ones(384, np.float32)
    nan[7] = np.nan
    vector = raised(lambda: sync_client.neighbors("minilm", nan))
    assert isinstance(vector, e.InvalidVector) and vector.details["index"] == 7
    zero = raised(lambda: sync_client.neighbors("small", "[PAD]"))
    assert isinstance(zero, e.ZeroVector) and zero.status == 422
    for error in (limit, invalid, width, vector, zero):
        assert isinstance(error, e.InvalidRequest)


def test_texts_and_queries_that_cannot_be_answered(sync_client: Client) -> None:
    several = raised(lambda: sync_client.neighbors("minilm", Text("unbelievably")))
    assert isinstance(several, e.SeveralPieces)
    assert several.pieces == ["un", "##bel", "##ie", "##va", "##bly"]
    assert isinstance(raised(lambda: sync_client.neighbors("minilm", Text("   "))), e.EmptyText)
    query = raised(lambda: sync_client.diagnostics("minilm", pattern="^no row is this$"))
    assert isinstance(query, e.InvalidQuery)
    other = raised(lambda: sync_client.drift("small", target="minilm"))
    assert isinstance(other, e.InvalidQuery) and "wide" in other.message
    # An index option sent to a table searched exactly: the server names the kinds it is for.
    margin = raised(lambda: sync_client.neighbors("minilm", "king", probe_margin=0.3))
    assert isinstance(margin, e.InvalidQuery) and "probe_margin applies to an ivf" in margin.message


def test_arguments_the_client_refuses_before_sending(sync_client: Client) -> None:
    with pytest.raises(TypeError):
        sync_client.lookup("minilm")
    with pytest.raises(TypeError):
        sync_client.neighbors("minilm", "king", exclude="queen")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="list"):
        sync_client.neighbors("minilm", np.ones((2, 384), np.float32))


@pytest.fixture(scope="module")
def keyed() -> Iterator[str]:
    """A server that needs the API key 'sesame'."""
    env = {
        "EMBEDDING_SERVICE_TABLES": json.dumps([minilm_table()]),
        "EMBEDDING_SERVICE_API_KEYS": json.dumps(["sesame"]),
    }
    with running_server(env) as base:
        yield base


def test_a_missing_or_wrong_key_is_unauthorized_and_the_right_one_opens(keyed: str) -> None:
    for client in (Client(keyed), Client(keyed, "open-up")):
        error = raised(lambda c=client: c.tables())
        assert isinstance(error, e.Unauthorized) and error.status == 401
    assert Client(keyed, "sesame").neighbors("minilm", "king", 1).tokens == ["kings"]


def test_a_server_that_is_not_there_is_unreachable() -> None:
    error = raised(lambda: Client(f"http://127.0.0.1:{free_port()}", retries=0).tables())
    assert isinstance(error, e.Unreachable) and error.status is None


def test_an_envelope_type_this_client_does_not_know_maps_by_its_status() -> None:
    future = {"error": {"type": "SomethingNew", "message": "later", "extra": 1}}
    mapped = e.error_from_answer(503, future, "2")
    assert type(mapped) is e.NotReady and mapped.type == "SomethingNew"
    assert mapped.details == {"extra": 1} and mapped.retry_after == 2.0
    assert type(e.error_from_answer(502, "<html>bad gateway</html>", None)) is e.InternalError
    assert type(e.error_from_answer(418, {"error": {"type": "Teapot"}}, None)) is e.InvalidRequest
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 28 < (e.seconds(when) or 0) <= 30
    assert e.seconds("soon") is None
