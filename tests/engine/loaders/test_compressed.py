"""Compressed files load directly (.gz, .bz2), streamed, the format seen through the suffix."""

from __future__ import annotations

import bz2
import gzip
from pathlib import Path

import numpy as np
import pytest
from gensim.models import KeyedVectors

from service.engine.loaders import detect_format, load_table, word2vec_binary
from tests.engine.loaders.helpers import TOKENS, assert_table, load_error, write_gensim

COMPRESS = {".gz": gzip.compress, ".bz2": bz2.compress}


@pytest.fixture
def many(tmp_path: Path) -> tuple[list[str], np.ndarray]:
    """A table big enough to span several windows once WINDOW_BYTES is made small."""
    rng = np.random.default_rng(3)
    tokens = [f"w{i}" + "é" * (i % 5) for i in range(300)]
    return tokens, rng.standard_normal((300, 8)).astype(np.float32)


@pytest.mark.parametrize("suffix", [".gz", ".bz2"])
def test_binary_written_compressed_by_gensim(
    tmp_path: Path, many: tuple[list[str], np.ndarray], suffix: str, monkeypatch
) -> None:
    monkeypatch.setattr(word2vec_binary, "WINDOW_BYTES", 1000)  # rows cross window edges
    tokens, vectors = many
    keyed = KeyedVectors(vectors.shape[1])
    keyed.add_vectors(tokens, vectors)
    path = tmp_path / f"vectors.bin{suffix}"
    keyed.save_word2vec_format(str(path), binary=True)  # gensim compresses by the suffix
    assert path.read_bytes()[:2] in (b"\x1f\x8b", b"BZ")
    assert detect_format(path) == "word2vec-binary"
    table = load_table(path)
    loaded = KeyedVectors.load_word2vec_format(str(path), binary=True)
    assert list(table.tokens) == loaded.index_to_key == tokens
    np.testing.assert_array_equal(table.vectors, loaded.vectors)
    assert load_table(path, limit=17).tokens == tuple(tokens[:17])


@pytest.mark.parametrize("suffix", [".gz", ".bz2"])
@pytest.mark.parametrize(("name", "options", "format"), [
    ("glove.txt", {"write_header": False}, "glove"),
    ("w2v.txt", {}, "word2vec-text"),
    ("wiki.vec", {}, "fasttext"),
])  # fmt: skip
def test_text_formats_compressed(
    tmp_path: Path, vectors: np.ndarray, suffix: str, name: str, options: dict, format: str
) -> None:
    plain = write_gensim(tmp_path / name, vectors, binary=False, **options)
    path = tmp_path / (name + suffix)
    path.write_bytes(COMPRESS[suffix](plain.read_bytes()))
    assert detect_format(path) == format
    assert_table(load_table(path), vectors, path, exact=False)


@pytest.mark.parametrize("suffix", [".gz", ".bz2"])
def test_truncated_compressed_data(tmp_path: Path, vectors: np.ndarray, suffix: str) -> None:
    data = COMPRESS[suffix](write_gensim(tmp_path / "t.bin", vectors, binary=True).read_bytes())
    path = tmp_path / f"cut.bin{suffix}"
    path.write_bytes(data[: len(data) // 2])
    with load_error(path, "truncated"):
        load_table(path)


@pytest.mark.parametrize("suffix", [".gz", ".bz2"])
def test_not_compressed_at_all(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"plain.bin{suffix}"
    path.write_bytes(b"7 5\nthe \x00\x00\x80?")
    with load_error(path, f"corrupt {'gzip' if suffix == '.gz' else 'bz2'} data"):
        load_table(path)


def test_formats_that_need_the_whole_file_refuse_compression(tmp_path: Path) -> None:
    path = tmp_path / "table.npy.gz"
    path.write_bytes(gzip.compress(b"\x93NUMPY"))
    assert detect_format(path) == "npy"
    with load_error(path, "npy files cannot be read compressed"):
        load_table(path)


def test_compressed_file_of_unknown_format(tmp_path: Path) -> None:
    path = tmp_path / "table.gz"
    path.write_bytes(gzip.compress(TOKENS[0].encode()))
    with load_error(path, "unknown format: extension '(none)'"):
        load_table(path)
