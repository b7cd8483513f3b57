"""The prepared form: written once, opened memory-mapped, every bad file named."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from service.engine.errors import TableLoadError
from service.engine.loaders import load_table
from service.engine.tables.prepared import open_prepared, write_prepared
from service.engine.tables.table import EmbeddingTable
from tests.conftest import SMALL_TOKENS, small_vectors


@pytest.fixture()
def table() -> EmbeddingTable:
    metadata = {
        "count": list(range(len(SMALL_TOKENS))),
        "weight": [0.5 * i for i in range(len(SMALL_TOKENS))],
        "pos": ["n", "v", "ñ", "", "a", "b", "c", "d", "e"],
    }
    return EmbeddingTable(SMALL_TOKENS, small_vectors(), metadata, source="small")


@pytest.fixture()
def folder(table: EmbeddingTable, tmp_path: Path) -> Path:
    return write_prepared(table, tmp_path / "small")


def test_a_prepared_table_opens_memory_mapped_and_equal(table, folder) -> None:
    opened = load_table(folder)  # the format is detected from the manifest
    assert isinstance(opened.vectors, np.memmap)
    np.testing.assert_array_equal(opened.vectors, table.vectors)
    np.testing.assert_array_equal(opened.norms64, table.norms64)
    assert list(opened.tokens) == SMALL_TOKENS
    assert opened.find("KING", case_insensitive=True) == table.find("KING", True) == 1
    assert opened.metadata_of(2) == table.metadata_of(2) == {"count": 2, "weight": 1.0, "pos": "ñ"}
    assert type(opened.metadata_of(2)["count"]) is int  # JSON-ready Python numbers


def test_the_real_table_keeps_its_tokenizer(minilm: EmbeddingTable, tmp_path: Path) -> None:
    opened = open_prepared(write_prepared(minilm, tmp_path / "minilm"))
    assert opened.tokenizer is not None
    assert opened.tokenizer.split("unbelievably").ids == minilm.tokenizer.split("unbelievably").ids


def test_writing_again_replaces_the_folder(table, folder) -> None:
    smaller = EmbeddingTable(SMALL_TOKENS[:3], small_vectors()[:3])
    write_prepared(smaller, folder)
    assert open_prepared(folder).rows == 3
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".")]


def corrupt(folder: Path, name: str) -> Path:
    path = folder / name
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (lambda f: corrupt(f, "tokens.bin"), "checksum mismatch"),
        (lambda f: corrupt(f, "norms.npy"), "checksum mismatch"),
        (lambda f: corrupt(f, "token_slots.npy"), "checksum mismatch"),
        (lambda f: (f / "vectors.npy").unlink() or f / "vectors.npy", "no such file"),
        (lambda f: _truncate(f / "vectors.npy"), "not a readable .npy"),
        (lambda f: _truncate(f / "tokens.bin"), "truncated"),
        (lambda f: _write(f / "table.json", "{"), "invalid json"),
        (lambda f: _manifest(f, version=99), "format version 99"),
        (lambda f: _manifest(f, rows=8), "says 8 x 4"),
    ],
)
def test_a_damaged_folder_names_the_file_and_the_problem(folder, damage, problem) -> None:
    path = damage(folder)
    with pytest.raises(TableLoadError) as caught:
        open_prepared(folder)
    assert str(path) in caught.value.message and problem in caught.value.message.lower()


def _truncate(path: Path) -> Path:
    path.write_bytes(path.read_bytes()[:-7])
    return path


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _manifest(folder: Path, **changes: object) -> Path:
    path = folder / "table.json"
    manifest = json.loads(path.read_text())
    manifest.update(changes)
    path.write_text(json.dumps(manifest))
    return path
