"""The parts that read an answer, alone: a compressed body decompresses a bounded step at a
time, and odd envelopes and headers become errors with defaults, not Python exceptions."""

from __future__ import annotations

import zlib
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from embedding_service import errors as e
from embedding_service.receiving import STEP_BYTES, Body, Inflater
from tests.client.misbehaving import gzip_of_zeros

GZIP = 16 + zlib.MAX_WBITS


def test_a_compressed_chunk_decompresses_a_bounded_step_at_a_time() -> None:
    chunk = gzip_of_zeros(256 << 20)[: 64 * 1024]  # what one read of a bomb brings: ~64 MB
    steps = list(Inflater(GZIP).decode(chunk))
    assert max(len(step) for step in steps) <= STEP_BYTES
    assert sum(len(step) for step in steps) > 32 << 20  # it is a bomb, decompressed in full


def test_a_body_never_holds_past_its_cap() -> None:
    bomb = gzip_of_zeros(64 << 20)
    response = httpx.Response(200, headers={"content-encoding": "gzip"})
    body = Body("http://x/v1/tables", response, limit=100_000)
    with pytest.raises(e.AnswerTooLarge) as refused:
        for start in range(0, len(bomb), 65536):
            body.feed(bomb[start : start + 65536])
    assert len(body.content) <= 100_000 and refused.value.limit == 100_000


def test_a_body_is_whole_once_its_compressed_stream_ends() -> None:
    packer = zlib.compressobj(9, zlib.DEFLATED, GZIP)
    data = packer.compress(b'{"tables": []}') + packer.flush()
    response = httpx.Response(200, headers={"content-encoding": "gzip"})
    whole, cut = Body("u", response, 1000), Body("u", response, 1000)
    whole.feed(data)
    cut.feed(data[:-4])
    assert whole.finish() == b'{"tables": []}'
    with pytest.raises(e.MalformedAnswer):
        cut.finish()


def test_details_of_another_type_read_as_their_default() -> None:
    envelope = {"error": {"type": "LimitExceeded", "message": "m", "limit": {"a": 1}, "got": "x"}}
    error = e.error_from_answer(422, envelope, None)
    assert isinstance(error, e.LimitExceeded) and (error.limit, error.got) == (0, 0)
    odd = e.error_from_answer(404, {"error": {"type": ["UnknownToken"], "message": 5}}, None)
    assert type(odd) is e.NotFound and odd.type == "HTTP404" and odd.message == ""


def test_a_retry_after_date_in_utc_of_unknown_origin_is_read() -> None:
    when = datetime.now(UTC) + timedelta(seconds=30)
    text = format_datetime(when, usegmt=True).replace("GMT", "-0000")
    assert 28 < (e.seconds(text) or 0) <= 30
