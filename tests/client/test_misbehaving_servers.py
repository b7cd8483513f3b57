"""Both clients against real servers that misbehave: a call ends within its timeout, an answer
is refused past the size cap, and every broken answer is the client's own error type.

Each server is a socket server in this process (tests/client/misbehaving.py) doing what a
broken or hostile server, or a proxy in front of one, can do; each call runs under a hang guard.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

import pytest

from embedding_service import errors as e
from embedding_service.base import DEFAULT_MAX_ANSWER_BYTES
from tests.client.misbehaving import (
    Request,
    answer,
    calling,
    endless,
    gzip_of_zeros,
    later,
    misbehaving,
    outcome_within_guard,
    reset,
    trickle,
)

KINDS = ["sync", "async"]
HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n"
# Decompressed size of the gzip bomb: four times the default cap, from about 0.26 MB.
BOMB_BYTES = 4 * DEFAULT_MAX_ANSWER_BYTES


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return gzip_of_zeros(BOMB_BYTES)


def raised(kind: str, behaviour: Any, method: str = "tables", *args: Any, **options: Any) -> Any:
    """What a call of `method` raises against a server of `behaviour` (within the hang guard)."""
    kwargs = options.pop("kwargs", {})
    with misbehaving(behaviour) as server:
        return outcome_within_guard(calling(kind, server.url, options, method, *args, **kwargs))


# The call's timeout: every request, wait and byte of the call.


@pytest.mark.parametrize("kind", KINDS)
def test_an_answer_that_trickles_ends_at_the_calls_timeout(kind: str) -> None:
    error = raised(kind, lambda request: trickle(request, HEAD + b" " * 1000), timeout=1)
    assert isinstance(error, e.TimedOut), error
    assert isinstance(error, e.ServiceError)


@pytest.mark.parametrize("kind", KINDS)
def test_a_body_that_trickles_after_its_head_ends_at_the_calls_timeout(kind: str) -> None:
    def head_then_trickle(request: Request) -> bool:
        request.conn.sendall(HEAD)
        return trickle(request, b" " * 1000)

    error = raised(kind, head_then_trickle, timeout=1)
    assert isinstance(error, e.TimedOut), error


@pytest.mark.parametrize("kind", KINDS)
def test_a_batch_of_prompt_requests_ends_at_the_calls_timeout(kind: str) -> None:
    def one_item_at_a_time(request: Request) -> bool:
        if request.path == "/v1/limits":
            return answer(request, b'{"max_batch": 1}')
        item = {"token": "w", "id": 0, "norm": 1.0, "metadata": {}}
        return later(0.4, lambda r: answer(r, json.dumps({"items": [item]}).encode()))(request)

    # Each request answers within 0.4 s, but ten of them take four.
    lookup = {"kwargs": {"ids": list(range(10)), "include_vector": False}}
    error = raised(kind, one_item_at_a_time, "lookup", "t", timeout=1, **lookup)
    assert isinstance(error, e.TimedOut), error


@pytest.mark.parametrize("kind", KINDS)
def test_retries_stop_before_a_wait_that_would_end_past_the_timeout(kind: str) -> None:
    def overloaded(request: Request) -> bool:
        envelope = {"error": {"type": "Overloaded", "message": "busy"}}
        body = json.dumps(envelope).encode()
        return answer(request, body, "429 Too Many Requests", {"retry-after": "1"})

    with misbehaving(overloaded) as server:
        options = {"timeout": 1.5, "retries": 100, "retry_timeout": 100}
        error = outcome_within_guard(calling(kind, server.url, options))
    assert isinstance(error, e.Overloaded), error
    assert 1 <= len(server.paths) <= 2  # at 0 s and 1 s; a third would start past 1.5 s


# The size cap: counted as the body arrives, decompressed.


@pytest.mark.parametrize("kind", KINDS)
def test_an_endless_answer_is_refused_at_the_default_cap(kind: str) -> None:
    error = raised(kind, lambda request: endless(request, b" " * 65536))
    assert isinstance(error, e.AnswerTooLarge), error
    assert error.limit == DEFAULT_MAX_ANSWER_BYTES and error.status == 200


@pytest.mark.parametrize("kind", KINDS)
def test_a_gzip_bomb_is_refused_at_the_cap_it_decompresses_past(kind: str, bomb: bytes) -> None:
    def gzipped(request: Request) -> bool:
        return answer(request, bomb, headers={"content-encoding": "gzip"})

    error = raised(kind, gzipped)
    assert isinstance(error, e.AnswerTooLarge), error
    assert error.limit == DEFAULT_MAX_ANSWER_BYTES
    small = raised(kind, gzipped, max_answer_bytes=1000)
    assert isinstance(small, e.AnswerTooLarge) and small.limit == 1000


@pytest.mark.parametrize("kind", KINDS)
def test_a_declared_length_past_the_cap_is_refused_before_reading(kind: str) -> None:
    def declares_a_gigabyte(request: Request) -> bool:
        request.conn.sendall(HEAD.replace(b"100000", str(1 << 30).encode()))
        return trickle(request, b" " * 1000)  # sends almost nothing: the head is enough

    error = raised(kind, declares_a_gigabyte, timeout=5)
    assert isinstance(error, e.AnswerTooLarge), error
    assert "declares 1,073,741,824 bytes" in str(error)


@pytest.mark.parametrize("kind", KINDS)
def test_an_answer_within_the_cap_is_read_whole_gzipped_or_not(kind: str) -> None:
    tables = json.dumps({"tables": []}).encode()
    plain = raised(kind, lambda request: answer(request, tables))
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    gzipped = packer.compress(tables) + packer.flush()
    encoded = {"content-encoding": "gzip"}
    compressed = raised(kind, lambda request: answer(request, gzipped, headers=encoded))
    assert plain == compressed == []


# Every broken answer is the client's own error.


def json_answer(body: bytes, status: str = "200 OK", media: str = "application/json") -> Any:
    return lambda request: answer(request, body, status, {"content-type": media})


def encoded(body: bytes, encoding: str) -> Any:
    return lambda request: answer(request, body, headers={"content-encoding": encoding})


def sends(data: bytes) -> Any:
    """Send `data` and close the connection."""
    return lambda request: request.conn.sendall(data) and False


def reset_part_way(request: Request) -> bool:
    request.conn.sendall(HEAD + b'{"tables": [')
    return later(0.3, reset)(request)  # after the client has read the head


CHUNKED_HEAD = HEAD.replace(b"content-length: 100000", b"transfer-encoding: chunked")
BROKEN = {
    "deep JSON": (json_answer(b"[" * 100_000 + b"]" * 100_000), e.AnswerTooDeep),
    "malformed JSON": (json_answer(b'{"tables": [{"name": '), e.MalformedAnswer),
    "invalid UTF-8": (json_answer(b'{"tables": ["\xff\xfe"]}'), e.MalformedAnswer),
    "an integer of 5,000 digits": (json_answer(b"9" * 5000), e.MalformedAnswer),
    "an empty body": (json_answer(b""), e.MalformedAnswer),
    "an HTML page": (json_answer(b"<html>hello</html>", media="text/html"), e.NotJSONAnswer),
    "JSON of another shape": (json_answer(b'{"tables": 5}'), e.UnexpectedAnswer),
    "JSON without the field": (json_answer(b'{"tablets": []}'), e.UnexpectedAnswer),
    "a table missing its facts": (json_answer(b'{"tables": [{"name": "t"}]}'), e.UnexpectedAnswer),
    "a string": (json_answer(b'"tables"'), e.UnexpectedAnswer),
    "not HTTP": (sends(b"SSH-2.0-OpenSSH_9.6\r\n\r\n"), e.InvalidHTTP),
    "an invalid chunk": (sends(CHUNKED_HEAD + b"zz\r\n"), e.InvalidHTTP),
    "a truncated body": (sends(HEAD + b'{"tables": ['), e.TruncatedAnswer),
    "a reset part way": (reset_part_way, e.TruncatedAnswer),
    "a reset before any answer": (reset, e.ConnectionLost),
    "a close before any answer": (lambda request: False, e.ConnectionLost),
    "gzip that is not": (encoded(b"not gzip at all", "gzip"), e.MalformedAnswer),
    "gzip that stops short": (encoded(gzip_of_zeros(1 << 20)[:100], "gzip"), e.MalformedAnswer),
    "an encoding not asked for": (encoded(b"{}", "br"), e.MalformedAnswer),
    "a 500 of deep JSON": (
        json_answer(b"[" * 100_000, "500 Internal Server Error"),
        e.InternalError,
    ),
    "a 502 HTML page": (json_answer(b"<html>", "502 Bad Gateway", "text/html"), e.InternalError),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", list(BROKEN))
def test_each_broken_answer_is_its_own_client_error(kind: str, shape: str) -> None:
    behaviour, expected = BROKEN[shape]
    error = raised(kind, behaviour, timeout=5)
    assert type(error) is expected, (shape, error)
    assert isinstance(error, e.ServiceError) and str(error)
