"""Format detection and the dispatch of load_table through the format -> loader table."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.engine.loaders import (
    FORMATS,
    LOADERS,
    LoadOptions,
    detect_format,
    load_table,
    load_text,
)
from tests.engine.loaders.helpers import assert_refused, load_error


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("a.bin", b"1 1\n", "word2vec-binary"),
        ("a.txt", b"3 300\nthe 0.1", "word2vec-text"),
        ("a.txt", b"the 0.1 0.2\n", "glove"),
        ("a.vec", b"", "fasttext"),
        ("a.bytes", b"", "projector"),
        ("a.npy", b"", "npy"),
        ("a.SAFETENSORS", b"", "huggingface"),
    ],
)
def test_detect_format(tmp_path: Path, name: str, content: bytes, expected: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    assert detect_format(path) == expected
    assert expected in FORMATS


FILE_NAMES = {
    "word2vec-binary": "t.bin",
    "word2vec-text": "t.txt",
    "glove": "t.txt",
    "fasttext": "t.vec",
    "projector": "t.bytes",
    "npy": "t.npy",
    "huggingface": "t.safetensors",
    "gguf": "t.gguf",
    "prepared": "t.prepared",  # a folder
    "model2vec": "t.model2vec",  # a folder
    "wordllama": "t_256.safetensors",
}


def test_formats_are_the_loader_table() -> None:
    assert FORMATS == tuple(LOADERS) == tuple(FILE_NAMES)
    assert LOADERS["word2vec-text"] is LOADERS["glove"] is LOADERS["fasttext"] is load_text


@pytest.mark.parametrize("format", FORMATS)
def test_missing_file(tmp_path: Path, format: str) -> None:
    path = tmp_path / FILE_NAMES[format]
    with load_error(path, "no such file"):
        LOADERS[format](path, LoadOptions())
    with load_error(path, "no such file"):
        load_table(path, format)


@pytest.mark.parametrize("format", FORMATS)
def test_empty_file(tmp_path: Path, format: str) -> None:
    path = tmp_path / FILE_NAMES[format]
    path.write_bytes(b"")
    folders = {
        "prepared": "is a file, not a prepared table's folder",
        "model2vec": "is a file: a Model2Vec model is a folder",
    }
    problem = folders.get(format, "file is empty")
    with load_error(path, problem):
        LOADERS[format](path, LoadOptions())


# A file of a binary format's name that is not one, and what its error says.
NOT_OF_ITS_FORMAT = {
    "npy": (b"\x93NUMPY garbage", "not a readable .npy file"),
    "huggingface": (b"not safetensors at all", "not a safetensors file: bad header length"),
    "gguf": (b"GGUF" + b"\xff" * 64, "not a GGUF file, or a damaged one"),
}


@pytest.mark.parametrize("format", list(NOT_OF_ITS_FORMAT))
def test_a_file_not_of_its_format(tmp_path: Path, format: str) -> None:
    assert_refused(tmp_path / FILE_NAMES[format], *NOT_OF_ITS_FORMAT[format])


def test_unknown_extension(tmp_path: Path) -> None:
    path = tmp_path / "table.parquet"
    path.write_bytes(b"PAR1")
    with load_error(path, "unknown format: extension '.parquet'"):
        load_table(path)
    with load_error(path, "unknown format 'parquet'"):
        load_table(path, "parquet")
