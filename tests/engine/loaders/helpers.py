"""Shared by the loader tests: the tokens, an independent writer (gensim) and the checks."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from gensim.models import KeyedVectors
from tokenizers import Tokenizer
from tokenizers.models import WordPiece
from tokenizers.pre_tokenizers import Whitespace

from service.engine.errors import TableLoadError
from service.engine.loaders import load_table
from service.engine.tables.table import EmbeddingTable

# Where a BERT-style model keeps its input embedding (found without being named).
BERT_TENSOR = "embeddings.word_embeddings.weight"
TOKENS = ["the", "naïve", "日本", "king", "kings", "[UNK]", "a\u2028b"]


WIDTH = 5


def write_gensim(path: Path, vectors: np.ndarray, **options: bool) -> Path:
    """Write TOKENS/vectors with gensim's save_word2vec_format (the independent writer)."""
    keyed = KeyedVectors(vectors.shape[1])
    keyed.add_vectors(TOKENS, vectors)
    keyed.save_word2vec_format(str(path), **options)
    return path


def write_vocab(path: Path, tokens: list[str], newline: str = "\n") -> Path:
    path.write_bytes(newline.join(tokens).encode() + newline.encode())
    return path


def write_tokenizer(path: Path, tokens: list[str], ids: list[int] | None = None) -> Path:
    """A real tokenizer.json written by the tokenizers library: WordPiece over `tokens` (ids
    0, 1, ... unless given), split on whitespace and punctuation, "[UNK]" for unknown words."""
    ids = list(range(len(tokens))) if ids is None else ids
    vocab = dict(zip(tokens, ids, strict=True))
    tokenizer = Tokenizer(WordPiece(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()
    tokenizer.save(str(path))
    return path


def assert_table(table: EmbeddingTable, vectors: np.ndarray, path: Path, exact: bool = True):
    assert list(table.tokens) == TOKENS
    assert table.source == str(path)
    if exact:
        np.testing.assert_array_equal(table.vectors, vectors)
    else:
        np.testing.assert_allclose(table.vectors, vectors, atol=1e-6)


@contextmanager
def load_error(path: Path, problem: str) -> Iterator[None]:
    """Expect a TableLoadError whose message names `path` and contains `problem`."""
    with pytest.raises(TableLoadError) as caught:
        yield
    assert caught.value.path == str(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert problem in caught.value.problem, caught.value.problem


def assert_refused(
    path: Path, content: bytes, problem: str, load: Callable[[Path], object] = load_table
) -> None:
    """`content` written at `path` does not load: the error names the file and `problem`."""
    path.write_bytes(content)
    with load_error(path, problem):
        load(path)
