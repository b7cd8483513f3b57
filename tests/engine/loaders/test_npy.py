"""NumPy .npy matrices with a vocabulary file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from service.engine.loaders import (
    LoadOptions,
    load_npy,
    load_table,
)
from tests.engine.loaders.helpers import (
    TOKENS,
    assert_table,
    load_error,
    write_vocab,
)


@pytest.mark.parametrize("vocab_name", ["table.vocab", "table.txt", "words.list"])
def test_npy_round_trips_numpy(tmp_path: Path, vectors: np.ndarray, vocab_name: str) -> None:
    path = tmp_path / "table.npy"
    np.save(path, vectors)
    vocab = write_vocab(tmp_path / vocab_name, TOKENS, newline="\r\n")
    explicit = vocab if vocab_name == "words.list" else None
    assert_table(load_npy(path, LoadOptions(vocab=explicit)), vectors, path)
    assert_table(load_table(path, vocab=explicit), vectors, path)


def test_npy_widens_float16(tmp_path: Path, vectors: np.ndarray) -> None:
    path = tmp_path / "half.npy"
    np.save(path, vectors.astype(np.float16))
    write_vocab(tmp_path / "half.vocab", TOKENS)
    table = load_npy(path)
    assert table.vectors.dtype == np.float32
    np.testing.assert_array_equal(table.vectors, vectors.astype(np.float16).astype(np.float32))


def test_npy_vocabulary_length_differs_from_rows(tmp_path: Path, vectors: np.ndarray) -> None:
    path = tmp_path / "table.npy"
    np.save(path, vectors)
    vocab = write_vocab(tmp_path / "table.vocab", TOKENS[:-1])
    with load_error(vocab, f"vocabulary has {len(TOKENS) - 1} tokens but table.npy has 7 rows"):
        load_npy(path)


def test_npy_without_vocabulary(tmp_path: Path, vectors: np.ndarray) -> None:
    path = tmp_path / "table.npy"
    np.save(path, vectors)
    with load_error(path, "no vocabulary file found next to it"):
        load_npy(path)


@pytest.mark.parametrize("shape", [(7,), (7, 5, 1)])
def test_npy_wrong_shape(tmp_path: Path, shape: tuple[int, ...]) -> None:
    path = tmp_path / "table.npy"
    np.save(path, np.zeros(shape, np.float32))
    with load_error(path, f"wrong shape {shape}"):
        load_npy(path)


def test_npy_limit(tmp_path: Path, vectors: np.ndarray) -> None:
    path = tmp_path / "table.npy"
    np.save(path, vectors)
    write_vocab(tmp_path / "table.vocab", TOKENS)
    table = load_table(path, limit=2)
    assert table.tokens == tuple(TOKENS[:2])
    np.testing.assert_array_equal(table.vectors, vectors[:2])
    assert table.vectors.base is None or not isinstance(table.vectors.base, np.memmap)
