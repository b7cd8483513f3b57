"""TensorFlow Embedding Projector tables: .bytes plus a labels .tsv."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from service.engine.loaders import (
    LoadOptions,
    detect_format,
    load_projector,
    load_table,
)
from tests.engine.loaders.helpers import (
    TOKENS,
    WIDTH,
    assert_table,
    load_error,
    write_vocab,
)


def test_projector_single_column_labels(tmp_path: Path, vectors: np.ndarray) -> None:
    path = tmp_path / "tensors.bytes"
    vectors.tofile(path)
    write_vocab(tmp_path / "tensors.tsv", TOKENS)
    assert detect_format(path) == "projector"
    for table in (load_projector(path), load_table(path, width=WIDTH)):
        assert_table(table, vectors, path)
        assert table.metadata == {}


def test_projector_multi_column_labels_become_metadata(tmp_path: Path, vectors: np.ndarray):
    path = tmp_path / "tensors.bytes"
    vectors.tofile(path)
    rows = [f"{t}\t{i * 10}\t{i / 2}\tpos{i}" for i, t in enumerate(TOKENS)]
    labels = write_vocab(tmp_path / "meta.tsv", ["word\tcount\tscore\ttag", *rows])
    table = load_projector(path, LoadOptions(labels=labels))
    assert_table(table, vectors, path)
    assert table.metadata["count"] == [i * 10 for i in range(len(TOKENS))]
    assert table.metadata["score"] == [i / 2 for i in range(len(TOKENS))]
    assert table.metadata["tag"] == [f"pos{i}" for i in range(len(TOKENS))]
    assert table.metadata_of(1) == {"count": 10, "score": 0.5, "tag": "pos1"}


def test_projector_bytes_not_divisible_by_width(tmp_path: Path, vectors: np.ndarray) -> None:
    path = tmp_path / "tensors.bytes"
    vectors.tofile(path)
    write_vocab(tmp_path / "tensors.tsv", TOKENS)
    with load_error(path, f"{vectors.nbytes} bytes do not divide into rows of 4 float32s"):
        load_projector(path, LoadOptions(width=4))
    write_vocab(tmp_path / "tensors.tsv", TOKENS[:-1])
    with load_error(path, "do not divide into 6 rows of float32s (one per label)"):
        load_projector(path)


def test_projector_ragged_labels(tmp_path: Path, vectors: np.ndarray) -> None:
    path = tmp_path / "tensors.bytes"
    vectors.tofile(path)
    labels = write_vocab(tmp_path / "tensors.tsv", ["word\tcount", "the\t1", "king"])
    with load_error(labels, "line 3: expected 2 tab-separated columns, found 1"):
        load_projector(path)


def test_projector_own_file_names_need_no_options(tmp_path: Path, vectors: np.ndarray) -> None:
    # As the projector's demo ships them: NAME_tensors.bytes beside NAME_labels.tsv.
    path = tmp_path / "word2vec_10000_200d_tensors.bytes"
    vectors.tofile(path)
    write_vocab(tmp_path / "word2vec_10000_200d_labels.tsv", TOKENS)
    assert detect_format(path) == "projector"
    assert_table(load_table(path), vectors, path)


def test_projector_without_labels_names_what_it_looked_for(tmp_path: Path, vectors: np.ndarray):
    path = tmp_path / "demo_tensors.bytes"
    vectors.tofile(path)
    with load_error(path, "no labels file found next to it (looked for demo_labels.tsv, demo"):
        load_table(path)


def test_projector_limit(tmp_path: Path, vectors: np.ndarray) -> None:
    path = tmp_path / "tensors.bytes"
    vectors.tofile(path)
    rows = [f"{t}\t{i}" for i, t in enumerate(TOKENS)]
    write_vocab(tmp_path / "tensors.tsv", ["word\tcount", *rows])
    table = load_projector(path, LoadOptions(limit=3))
    assert table.tokens == tuple(TOKENS[:3]) and table.metadata == {"count": [0, 1, 2]}
    np.testing.assert_array_equal(table.vectors, vectors[:3])
