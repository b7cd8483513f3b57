"""The tables of the gensim parity tests, loaded by gensim from the very files the server reads,
and the comparisons: same keys (up to gensim's own ties), scores within SCORE_TOLERANCE."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gensim.models import KeyedVectors
from gensim.test.utils import datapath

from embedding_service.keyedvectors import RemoteKeyedVectors
from tests.client.helpers import minilm_rows, minilm_table

SCORE_TOLERANCE = 1e-5
# Rows whose gensim scores differ by less than this are a tie: float32 (gensim) and float64
# (the service) may order them either way.
TIE = 1e-6
QUERIES = 200
TOPN = 10

Pair = tuple[KeyedVectors, RemoteKeyedVectors]


def draw(local: KeyedVectors, seed: int) -> Callable[[int], list[str]]:
    """Seeded groups of distinct keys from the whole vocabulary."""
    rng = np.random.default_rng(seed)
    keys = local.index_to_key
    return lambda size: [keys[int(i)] for i in rng.choice(len(keys), size=size, replace=False)]


def float64_copy(local: KeyedVectors) -> KeyedVectors:
    """gensim's KeyedVectors of the same rows held as float64: gensim's own arithmetic without
    its float32 rounding."""
    exact = KeyedVectors(local.vector_size, dtype=np.float64)
    exact.add_vectors(local.index_to_key, local.vectors.astype(np.float64))
    return exact


def gensim_files(folder: Path) -> dict[str, tuple[dict[str, Any], KeyedVectors]]:
    """name -> (the server's table spec, gensim's KeyedVectors of the same file)."""
    word2vec = datapath("euclidean_vectors.bin")
    fasttext = datapath("lee_fasttext.vec")
    glove = datapath("test_glove.txt")
    projector = write_projector(
        folder, KeyedVectors.load_word2vec_format(datapath("crime-and-punishment.vec"))
    )
    tokens, rows = minilm_rows()
    minilm = KeyedVectors(rows.shape[1])
    minilm.add_vectors(tokens, rows)
    counts = write_counts(folder, KeyedVectors.load_word2vec_format(word2vec, binary=True))
    return {
        "minilm": (minilm_table(), minilm),
        "word2vec": (
            {"name": "word2vec", "path": word2vec, "format": "word2vec-binary", "counts": counts},
            KeyedVectors.load_word2vec_format(word2vec, binary=True, fvocab=counts),
        ),
        "fasttext": (
            {"name": "fasttext", "path": fasttext, "format": "fasttext"},
            KeyedVectors.load_word2vec_format(fasttext),
        ),
        "glove": (
            {"name": "glove", "path": glove, "format": "glove"},
            KeyedVectors.load_word2vec_format(glove, no_header=True),
        ),
        "projector": (
            {"name": "projector", "path": str(projector), "format": "projector"},
            load_projector(projector),
        ),
    }


def write_counts(folder: Path, source: KeyedVectors) -> str:
    """A word2vec vocabulary file (`token count` lines, seeded counts) for every key of
    `source`: the server's `count` metadata column, gensim's `count` attribute."""
    counts = np.random.default_rng(0).integers(1, 10**6, size=len(source))
    path = folder / "word2vec.vocab"
    lines = (f"{key} {count}\n" for key, count in zip(source.index_to_key, counts, strict=True))
    path.write_text("".join(lines), encoding="utf-8")
    return str(path)


def write_projector(folder: Path, source: KeyedVectors) -> Path:
    """`source` as an Embedding Projector table: raw float32 .bytes and a labels .tsv with
    metadata columns (an int, a float and a string one)."""
    tensors = folder / "crime_tensors.bytes"
    source.vectors.astype("<f4").tofile(tensors)
    lines = [
        f"{key}\t{len(key)}\t{index / 7:.4f}\t{'upper' if key.isupper() else 'other'}\n"
        for index, key in enumerate(source.index_to_key)
    ]
    labels = "label\tlength\tshare\tshape\n" + "".join(lines)
    (folder / "crime_labels.tsv").write_text(labels, encoding="utf-8")
    return tensors


def load_projector(tensors: Path) -> KeyedVectors:
    """gensim's KeyedVectors of a projector file, read with numpy (gensim has no reader), its
    metadata columns as gensim's per-key attributes."""
    text = tensors.with_name("crime_labels.tsv").read_text(encoding="utf-8")
    header, *lines = [line.split("\t") for line in text.splitlines()]
    labels = [fields[0] for fields in lines]
    rows = np.fromfile(tensors, dtype="<f4").reshape(len(labels), -1)
    keyed = KeyedVectors(rows.shape[1])
    keyed.add_vectors(labels, rows.astype(np.float32))
    for column, name in enumerate(header[1:], 1):
        kind = int if name == "length" else float if name == "share" else str
        for label, fields in zip(labels, lines, strict=True):
            keyed.set_vecattr(label, name, kind(fields[column]))
    return keyed


def assert_same_ranking(
    remote: Sequence[tuple[str, float]],
    local: Sequence[tuple[str, float]],
    deeper: Sequence[tuple[str, float]],
    rtol: float = 0.0,
) -> None:
    """Same keys in the same order, up to gensim's own ties, and scores within the tolerance
    (and `rtol` of gensim's, which then widens a tie alike: 3CosMul objectives grow large)."""
    assert len(remote) == len(local), (remote, local)
    scores = dict(deeper)
    for (key, score), (their_key, their_score) in zip(remote, local, strict=True):
        assert score == pytest.approx(their_score, rel=rtol, abs=SCORE_TOLERANCE), (key, their_key)
        if key != their_key:
            assert key in scores, f"{key!r} is not among gensim's answers"
            tie = max(TIE, rtol * abs(their_score))
            assert abs(scores[key] - their_score) < tie, (key, their_key)


def assert_same_keys_up_to_ties(
    remote: Sequence[str], local: Sequence[str], distance_of: dict[str, float], bound: float
) -> None:
    """The same keys, except keys gensim puts within TIE of the bound (either side is right)."""
    differing = set(remote) ^ set(local)
    assert all(abs(distance_of[key] - bound) < TIE for key in differing), differing
    assert [k for k in remote if k not in differing] == [k for k in local if k not in differing]


def assert_same_scores(remote: np.ndarray, local: np.ndarray, rtol: float = 0.0) -> None:
    """A score for every row: the same length, NaN where gensim's is (0/0), else within
    SCORE_TOLERANCE (and `rtol` of gensim's: a 3CosMul objective grows towards 1e6 where a
    negative term's shifted cosine nears 0, and gensim's float32 is then a few 1e-6 off)."""
    assert remote.shape == local.shape, (remote.shape, local.shape)
    np.testing.assert_array_equal(np.isnan(remote), np.isnan(local))
    np.testing.assert_allclose(remote, local, rtol=rtol, atol=SCORE_TOLERANCE)
