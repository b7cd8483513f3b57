"""The gzip reader of compressed tables, against Python's gzip module on the same bytes."""

from __future__ import annotations

import gzip
import io
import zlib

import numpy as np
import pytest

from service.engine.files.reading import _GzipMembers, gzip_stream


def payload(size: int, seed: int = 0) -> bytes:
    """Bytes that compress a little, like float rows: random with runs of zeros."""
    data = np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8)
    data[::3] = 0
    return data.tobytes()


def read_all(data: bytes, step: int) -> bytes:
    stream = gzip_stream(io.BytesIO(data))
    chunks = []
    while chunk := stream.read(step):
        chunks.append(chunk)
    return b"".join(chunks)


@pytest.mark.parametrize("step", [1, 4096, 1 << 25])
def test_members_and_zero_padding_read_as_gzip_reads_them(step: int) -> None:
    first, second = payload(3_000_000), payload(70_000, seed=1)
    data = gzip.compress(first) + b"\x00" * 600 + gzip.compress(second) + b"\x00" * 5
    if step == 1:  # byte by byte is slow: a smaller file shows the same thing
        data = gzip.compress(first[:5000]) + b"\x00" * 3 + gzip.compress(second[:7000])
    assert read_all(data, step) == gzip.decompress(data)


def test_lines_read_through_the_buffer() -> None:
    text = b"".join(b"row %d\n" % i for i in range(100_000))
    stream = gzip_stream(io.BytesIO(gzip.compress(text)))
    assert stream.readline() == b"row 0\n"
    assert stream.read() == text[len(b"row 0\n") :]


def test_truncated_data_raises_eof_error() -> None:
    data = gzip.compress(payload(200_000))
    for cut in (10, len(data) // 2, len(data) - 4):
        with pytest.raises(EOFError):
            read_all(data[:cut], 1 << 20)


def test_a_damaged_member_fails_its_check() -> None:
    data = bytearray(gzip.compress(payload(200_000)))
    data[-8] ^= 0xFF  # the CRC-32 in the trailer
    with pytest.raises(zlib.error):
        read_all(bytes(data), 1 << 20)


def test_data_that_is_not_gzip_is_refused() -> None:
    with pytest.raises(zlib.error):
        read_all(b"7 5\nthe \x00\x00\x80?" * 10, 1 << 20)


def test_a_small_file_that_inflates_hugely_is_inflated_a_step_at_a_time() -> None:
    members = _GzipMembers(io.BytesIO(gzip.compress(bytes(1 << 28))))  # 256 MiB of zeros
    buffer = bytearray(1 << 28)
    sizes = [members.readinto(buffer) for _ in range(3)]
    assert all(0 < size <= 1 << 22 for size in sizes), sizes
