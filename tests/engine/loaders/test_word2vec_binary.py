"""word2vec binary files written by gensim and by hand, good and bad."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from service.engine.loaders import (
    load_table,
    load_word2vec_binary,
)
from tests.engine.loaders.helpers import (
    TOKENS,
    WIDTH,
    assert_table,
    load_error,
    write_gensim,
)


def test_word2vec_binary_round_trips_gensim(tmp_path: Path, vectors: np.ndarray) -> None:
    path = write_gensim(tmp_path / "w2v.bin", vectors, binary=True)
    assert_table(load_word2vec_binary(path), vectors, path)
    assert_table(load_table(path), vectors, path)


def test_word2vec_binary_accepts_c_style_newlines(tmp_path: Path, vectors: np.ndarray) -> None:
    rows = [
        f"{t} ".encode() + v.astype("<f4").tobytes() + b"\n"
        for t, v in zip(TOKENS, vectors, strict=True)
    ]
    path = tmp_path / "c.bin"
    path.write_bytes(f"{len(TOKENS)} {WIDTH}\n".encode() + b"".join(rows))
    assert_table(load_word2vec_binary(path), vectors, path)


def test_word2vec_binary_stops_at_the_header_row_count(tmp_path: Path, vectors: np.ndarray):
    path = write_gensim(tmp_path / "w2v.bin", vectors, binary=True)
    data = path.read_bytes()
    path.write_bytes(data.replace(f"{len(TOKENS)} ".encode(), b"2 ", 1) + b"trailing junk")
    assert list(load_word2vec_binary(path).tokens) == TOKENS[:2]


def test_directory_is_not_a_file(tmp_path: Path) -> None:
    path = tmp_path / "folder.bin"
    path.mkdir()
    with load_error(path, "is a directory"):
        load_word2vec_binary(path)


def test_truncated_binary_mid_row(tmp_path: Path, vectors: np.ndarray) -> None:
    path = write_gensim(tmp_path / "w2v.bin", vectors, binary=True)
    path.write_bytes(path.read_bytes()[:-7])
    with load_error(path, f"truncated: header says {len(TOKENS)} rows, found {len(TOKENS) - 1}"):
        load_word2vec_binary(path)


@pytest.mark.parametrize("header", [b"", b"7\n", b"seven 5\n", b"7 5 3\n", b"7 5"])
def test_binary_bad_header(tmp_path: Path, header: bytes) -> None:
    path = tmp_path / "bad.bin"
    path.write_bytes(header + b"the \x00\x00\x80?")
    with load_error(path, "bad header"):
        load_word2vec_binary(path)


def test_binary_non_finite_value(tmp_path: Path, vectors: np.ndarray) -> None:
    vectors[2, 1] = np.nan
    path = write_gensim(tmp_path / "nan.bin", vectors, binary=True)
    with load_error(path, "non-finite value (NaN or infinity) in row 2"):
        load_word2vec_binary(path)


def test_invalid_utf8_token_binary(tmp_path: Path, vectors: np.ndarray) -> None:
    path = tmp_path / "latin1.bin"
    row = "naïve ".encode("latin-1") + vectors[0].tobytes()
    path.write_bytes(b"1 5\n" + row)
    with load_error(path, "row 0: token is not valid UTF-8 (byte offset 6)"):
        load_word2vec_binary(path)
