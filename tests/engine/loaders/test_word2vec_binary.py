"""word2vec binary files written by gensim and by hand, good and bad."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
from gensim.models import KeyedVectors
from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine.loaders import (
    LoadOptions,
    load_table,
    load_word2vec_binary,
    word2vec_binary,
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


@pytest.mark.parametrize("rest", [b"", b"the \x00\x00"])
def test_a_file_with_no_whole_row_is_truncated(tmp_path: Path, rest: bytes) -> None:
    path = tmp_path / "short.bin"
    path.write_bytes(b"5 3\n" + rest)  # room for no row: the table is empty, not too large
    with load_error(path, "truncated: header says 5 rows, found 0"):
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


# --- the fast reader against gensim: layouts, windows, options --------------------------------


def write_rows(path: Path, tokens: list[bytes], vectors: np.ndarray, separator: bytes) -> Path:
    """A binary file as the C tool (separator b"\\n") or gensim (b"") writes it."""
    pairs = zip(tokens, vectors, strict=True)
    rows = [token + b" " + row.astype("<f4").tobytes() + separator for token, row in pairs]
    path.write_bytes(f"{len(tokens)} {vectors.shape[1]}\n".encode() + b"".join(rows))
    return path


def gensim_reads(path: Path, **options: object) -> KeyedVectors:
    return KeyedVectors.load_word2vec_format(str(path), binary=True, **options)


def assert_as_gensim(path: Path, **options: object) -> None:
    keyed = gensim_reads(path, **options)
    table = load_word2vec_binary(path, LoadOptions(**options))  # type: ignore[arg-type]
    assert list(table.tokens) == keyed.index_to_key
    np.testing.assert_array_equal(table.vectors, keyed.vectors)


# Tokens gensim and we can both read: no space, no leading newline, unique.
token_bytes = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters=" \n"), min_size=1, max_size=9
).map(lambda token: token.encode())


@settings(max_examples=60, deadline=None)
@given(
    tokens=st.lists(token_bytes, min_size=1, max_size=40, unique=True),
    width=st.integers(1, 6),
    separator=st.sampled_from([b"", b"\n", b"\n\n"]),
    window=st.integers(8, 200),
    seed=st.integers(0, 2**32 - 1),
)
def test_any_table_reads_as_gensim_reads_it(
    tmp_path_factory: pytest.TempPathFactory,
    tokens: list[bytes],
    width: int,
    separator: bytes,
    window: int,
    seed: int,
) -> None:
    # Float bytes full of spaces and newlines: a reader that looks for them in the wrong
    # place splits rows wrongly. Small windows put row edges everywhere.
    vectors = np.random.default_rng(seed).choice(
        np.frombuffer(b"  \n\n\x20\x41\x0a\x3f", "<f4"), (len(tokens), width)
    )
    path = write_rows(tmp_path_factory.mktemp("any") / "t.bin", tokens, vectors, separator)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(word2vec_binary, "WINDOW_BYTES", window)
        assert_as_gensim(path)


@pytest.mark.parametrize("errors", ["replace", "ignore"])
def test_invalid_utf8_tokens_replaced_or_ignored_as_gensim(tmp_path: Path, errors: str) -> None:
    tokens = [b"caf\xc3", b"\x97", b"ok", "naïve".encode(), b"\n\xff\nx", b"\xe6\x97z"]
    vectors = np.arange(len(tokens) * 2, dtype=np.float32).reshape(-1, 2)
    assert_as_gensim(
        write_rows(tmp_path / "cut.bin", tokens, vectors, b"\n"), unicode_errors=errors
    )


def test_invalid_utf8_token_says_which_option_loads_it(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "cut.bin", [b"ok", b"caf\xc3"], np.ones((2, 2)), b"")
    with load_error(path, "row 1: token is not valid UTF-8 (byte offset 18); "):
        load_word2vec_binary(path)
    with load_error(path, "unicode_errors='replace' or 'ignore' loads it"):
        load_word2vec_binary(path)


def test_tokens_equal_after_replacement_are_reported(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "two.bin", [b"a", b"caf\xe9", b"caf\xe8"], np.ones((3, 2)), b"")
    with load_error(path, "row 1 and row 2 hold the same token once unicode_errors='replace'"):
        load_word2vec_binary(path, LoadOptions(unicode_errors="replace"))


@pytest.mark.parametrize("limit", [1, 3, 7, 8, 100])
def test_limit_is_gensims_limit(tmp_path: Path, vectors: np.ndarray, limit: int) -> None:
    assert_as_gensim(write_gensim(tmp_path / "w2v.bin", vectors, binary=True), limit=limit)


@pytest.mark.parametrize("header", [b"0 5\n", b"7 0\n", b"7 99999999\n"])
def test_binary_header_out_of_range(tmp_path: Path, header: bytes) -> None:
    path = tmp_path / "bad.bin"
    path.write_bytes(header + b"the \x00\x00\x80?")
    with load_error(path, "bad header: rows must be >= 1, width 1 to"):
        load_word2vec_binary(path)


def test_a_header_promising_more_rows_than_memory(tmp_path: Path) -> None:
    path = tmp_path / "huge.bin.gz"
    path.write_bytes(gzip.compress(b"999999999999 300\nthe " + bytes(1200)))
    with load_error(path, "header says 999999999999 rows of 300: too large"):
        load_word2vec_binary(path)
