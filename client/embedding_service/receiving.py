"""An answer read within the client's bounds, and every way it can fail as its own error.

The body streams in and is decompressed here, a step of at most STEP_BYTES at a time, and
counted against `max_answer_bytes` as it grows: an endless body or a gzip bomb is refused once
past the cap (AnswerTooLarge), never held beyond it. Then the JSON is parsed; a failure of the
connection, the HTTP framing, the encoding or the JSON raises the error errors.py names for it,
never a bare Python exception.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from embedding_service.errors import (
    AnswerTooDeep,
    AnswerTooLarge,
    ConnectionLost,
    InvalidHTTP,
    MalformedAnswer,
    NotJSONAnswer,
    ServiceError,
    TimedOut,
    TruncatedAnswer,
    Unreachable,
    error_from_answer,
)
from embedding_service.plans import Answer

# The encodings the client asks for; it decompresses them itself, to count what they make.
ACCEPT_ENCODING = "gzip, deflate"
# zlib's window bits for each: gzip's header, or zlib's (what RFC 9110 calls "deflate").
WINDOW_BITS = {
    "gzip": 16 + zlib.MAX_WBITS,
    "x-gzip": 16 + zlib.MAX_WBITS,
    "deflate": zlib.MAX_WBITS,
}
# Decompressed bytes made per step: the most a compressed body is held past the cap.
STEP_BYTES = 64 * 1024
# Of an error answer that is not the envelope, the text kept in its message.
MESSAGE_BYTES = 800
# httpcore's words for a connection that ended: before a head, and inside a body.
DISCONNECTED = ("Server disconnected", "peer closed connection")


class Inflater:
    """A compressed body's bytes as they decompress, at most STEP_BYTES a step."""

    def __init__(self, window_bits: int) -> None:
        self._zlib = zlib.decompressobj(window_bits)

    def decode(self, data: bytes) -> Iterator[bytes]:
        """The bytes `data` decompresses to, a step at a time."""
        while data:
            yield self._zlib.decompress(data, STEP_BYTES)
            data = self._zlib.unconsumed_tail

    @property
    def complete(self) -> bool:
        """Whether the compressed stream has reached its end."""
        return self._zlib.eof


class Body:
    """One answer's body as it arrives: decompressed, counted, refused past `limit` bytes."""

    def __init__(self, where: str, response: httpx.Response, limit: int) -> None:
        self.where = where
        self.status = response.status_code
        self.limit = limit
        self.inflater = _inflater(where, response)
        declared = response.headers.get("content-length", "")
        if self.inflater is None and declared.isdigit() and int(declared) > limit:
            raise self._too_large(f"declares {int(declared):,} bytes")
        self.content = bytearray()

    def feed(self, raw: bytes) -> None:
        """Add the next bytes received."""
        parts = self.inflater.decode(raw) if self.inflater else (raw,)
        try:
            for part in parts:  # counted a step at a time, as it decompresses
                if len(self.content) + len(part) > self.limit:
                    raise self._too_large("is longer")
                self.content += part
        except zlib.error as error:
            raise self._malformed(f"a compressed body that does not decompress ({error})") from None

    def finish(self) -> bytearray:
        """The whole body, once the connection has delivered all of it."""
        if self.inflater is not None and not self.inflater.complete:
            raise self._malformed("a compressed body that ends before its end")
        return self.content

    def _too_large(self, how: str) -> AnswerTooLarge:
        message = (
            f"{self.where}: the answer {how} than max_answer_bytes ({self.limit:,}); "
            "Client(..., max_answer_bytes=N) takes a larger one"
        )
        return AnswerTooLarge(message, status=self.status, details={"limit": self.limit})

    def _malformed(self, what: str) -> MalformedAnswer:
        return MalformedAnswer(f"{self.where}: {what}", status=self.status)


def _inflater(where: str, response: httpx.Response) -> Inflater | None:
    """The decompressor of the answer's content-encoding (None: as it is)."""
    codings = response.headers.get("content-encoding", "").lower().split(",")
    named = [coding.strip() for coding in codings if coding.strip() not in ("", "identity")]
    if not named:
        return None
    if len(named) > 1 or named[0] not in WINDOW_BITS:
        text = ", ".join(named)
        raise MalformedAnswer(
            f"{where}: an answer in content-encoding {text!r}, which the client did not ask for",
            status=response.status_code,
        )
    return Inflater(WINDOW_BITS[named[0]])


def read_answer(where: str, response: httpx.Response, content: bytearray) -> Answer | ServiceError:
    """What a whole answer means: its JSON on success, else the error its envelope names."""
    if not response.is_success:
        retry_after = response.headers.get("retry-after")
        return error_from_answer(response.status_code, _envelope_or_text(content), retry_after)
    media = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if media and media != "application/json" and not media.endswith("+json"):
        return NotJSONAnswer(f"{where}: a {media!r} answer, not JSON", status=response.status_code)
    try:
        return json.loads(content)
    except RecursionError:
        return AnswerTooDeep(f"{where}: JSON nested too deep to parse", status=response.status_code)
    except ValueError as error:  # invalid JSON, invalid UTF-8, a number past int's digits
        return MalformedAnswer(f"{where}: invalid JSON ({error})", status=response.status_code)


def _envelope_or_text(content: bytearray) -> Answer:
    """An error answer's envelope, or the start of its text when it has none."""
    try:
        data = json.loads(content)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        return data
    return content[:MESSAGE_BYTES].decode("utf-8", errors="replace")


@contextmanager
def request_failures(where: str) -> Iterator[None]:
    """A request that ends before an answer's head raises why: timed out, connection lost (a
    reset or a close), not HTTP, or unreachable."""
    try:
        yield
    except httpx.TimeoutException as error:
        raise TimedOut(f"{where}: no answer within the call's timeout ({error!r})") from error
    except httpx.RemoteProtocolError as error:
        if str(error).startswith(DISCONNECTED):
            raise ConnectionLost(f"{where}: {error!r}") from error
        raise InvalidHTTP(f"{where}: {error!r}") from error
    except (httpx.ReadError, httpx.WriteError) as error:
        raise ConnectionLost(f"{where}: {error!r}") from error
    except httpx.TransportError as error:
        raise Unreachable(f"{where}: {error!r}") from error


@contextmanager
def body_failures(where: str, status: int) -> Iterator[None]:
    """A body that stops before its end raises why: timed out, truncated, or not HTTP."""
    try:
        yield
    except httpx.TimeoutException as error:
        message = f"{where}: the answer did not end within the call's timeout ({error!r})"
        raise TimedOut(message, status=status) from error
    except httpx.RemoteProtocolError as error:
        if str(error).startswith(DISCONNECTED):
            raise TruncatedAnswer(f"{where}: {error!r}", status=status) from error
        raise InvalidHTTP(f"{where}: {error!r}", status=status) from error
    except httpx.TransportError as error:
        raise TruncatedAnswer(f"{where}: {error!r}", status=status) from error
