"""Every format read straight into the layout it is served in (LoadOptions.layout): the rows
held row after row when asked, the same values and tokens as by columns, and a language model's
output table by columns either way (it is only scored whole)."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from service.engine.loaders import load_table
from service.engine.tables.layout import layout_of
from service.engine.tables.table import EmbeddingTable
from tests.engine.loaders.helpers import TOKENS, WIDTH, write_gensim, write_vocab
from tests.language_models import write_gguf, write_llama


def word2vec_binary(folder: Path, vectors: np.ndarray) -> Path:
    return write_gensim(folder / "t.bin", vectors, binary=True)


def word2vec_binary_gzip(folder: Path, vectors: np.ndarray) -> Path:
    plain = word2vec_binary(folder, vectors)
    packed = folder / "t.bin.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    return packed


def word2vec_text(folder: Path, vectors: np.ndarray) -> Path:
    return write_gensim(folder / "t.txt", vectors, binary=False)


def npy(folder: Path, vectors: np.ndarray) -> Path:
    np.save(folder / "t.npy", vectors)
    write_vocab(folder / "t.vocab", TOKENS)
    return folder / "t.npy"


def projector(folder: Path, vectors: np.ndarray) -> Path:
    vectors.tofile(folder / "t.bytes")
    write_vocab(folder / "t.tsv", TOKENS)
    return folder / "t.bytes"


def huggingface(folder: Path, vectors: np.ndarray) -> Path:
    return write_llama(folder / "llama").folder  # untied: an output table too


def gguf(folder: Path, vectors: np.ndarray) -> Path:
    return write_gguf(folder / "t.gguf").folder


WRITERS: list[Callable[[Path, np.ndarray], Path]] = [
    word2vec_binary, word2vec_binary_gzip, word2vec_text, npy, projector, huggingface, gguf
]  # fmt: skip


def load(path: Path, **options: object) -> EmbeddingTable:
    width = {"width": WIDTH} if path.suffix == ".bytes" else {}
    return load_table(path, **width, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("write", WRITERS, ids=lambda write: write.__name__)
def test_a_table_is_read_straight_into_the_layout_asked(
    write: Callable[[Path, np.ndarray], Path], tmp_path: Path, vectors: np.ndarray
) -> None:
    path = write(tmp_path, vectors)
    by_columns, by_rows = load(path), load(path, layout="rows")
    assert (layout_of(by_columns.vectors), by_columns.layout) == ("columns", "columns")
    assert (layout_of(by_rows.vectors), by_rows.layout) == ("rows", "rows")
    assert by_rows.vectors.flags.c_contiguous and by_rows.vectors.dtype == np.float32
    np.testing.assert_array_equal(by_rows.vectors, by_columns.vectors)
    assert list(by_rows.tokens) == list(by_columns.tokens)
    np.testing.assert_array_equal(by_rows.norms64, by_columns.norms64)
    if by_columns.output is not None:
        assert layout_of(by_rows.output) == layout_of(by_columns.output) == "columns"
        np.testing.assert_array_equal(by_rows.output, by_columns.output)


def test_a_rows_table_stays_by_rows_through_a_replace(tmp_path: Path, vectors: np.ndarray):
    # with_counts and the checkpoint views rebuild a table with dataclasses.replace: its rows
    # must not be laid out again by columns (a second copy) on the way.
    from dataclasses import replace

    table = load(word2vec_binary(tmp_path, vectors), layout="rows")
    again = replace(table, metadata={"n": list(range(table.rows))})
    assert again.layout == "rows"
    assert np.shares_memory(again.vectors, table.vectors)


@pytest.mark.parametrize(
    "write", [word2vec_binary, word2vec_binary_gzip, word2vec_text, huggingface, gguf],
    ids=lambda write: write.__name__,
)  # fmt: skip
def test_a_loader_that_fills_its_rows_makes_no_second_copy(
    write: Callable[[Path, np.ndarray], Path],
    tmp_path: Path,
    vectors: np.ndarray,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The readers that fill a blank array (or parse rows in memory) hand it over as the
    # table's one copy: no block copy into another layout runs. (npy and projector files are
    # mapped, and a table is never a view of a file: they are copied once, in the layout.)
    from service.engine.tables import layout

    path = write(tmp_path, vectors)

    def refused(source: object, target: np.ndarray) -> np.ndarray:
        raise AssertionError("a second copy of the rows")

    monkeypatch.setattr(layout, "copy_rows", refused)
    assert load(path, layout="rows").layout == "rows"
