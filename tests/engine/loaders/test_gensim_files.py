"""Real files as they come: gensim's own test files, loaded by gensim and by us alike.

Each file is read by both with the same options, and tokens and vectors must be equal to
the bit. The files ship in the gensim wheel (gensim/test/test_data).
"""

from __future__ import annotations

from pathlib import Path

import gensim
import numpy as np
import pytest
from gensim.models import KeyedVectors

from service.engine.loaders import load_table
from tests.engine.loaders.helpers import load_error

GENSIM_DATA = Path(gensim.__file__).parent / "test" / "test_data"
# name -> (our format, gensim's binary flag); word2vec files of both kinds, written by the C
# tool, by fastText and by gensim.
FILES = {
    "euclidean_vectors.bin": ("word2vec-binary", True),
    "poincare_vectors.bin": ("word2vec-binary", True),
    "high_precision.kv.bin": ("word2vec-binary", True),
    "high_precision.kv.txt": ("word2vec-text", False),
    "crime-and-punishment.vec": ("fasttext", False),
    "lee_fasttext.vec": ("fasttext", False),
    "toy-model.vec": ("fasttext", False),
    "EN.1-10.cbow1_wind5_hs0_neg10_size300_smpl1e-05.txt": ("word2vec-text", False),
}
POLARITY = GENSIM_DATA / "pang_lee_polarity_fasttext.vec"


def assert_same(path: Path, keyed: KeyedVectors, **options: object) -> None:
    table = load_table(path, **options)  # type: ignore[arg-type]
    assert list(table.tokens) == keyed.index_to_key
    assert table.vectors.dtype == keyed.vectors.dtype
    np.testing.assert_array_equal(table.vectors, keyed.vectors)


@pytest.mark.parametrize("name", list(FILES))
def test_gensim_test_files(name: str) -> None:
    format, binary = FILES[name]
    path = GENSIM_DATA / name
    assert_same(path, KeyedVectors.load_word2vec_format(str(path), binary=binary), format=format)


def test_gensim_glove_file_without_header() -> None:
    path = GENSIM_DATA / "test_glove.txt"
    keyed = KeyedVectors.load_word2vec_format(str(path), binary=False, no_header=True)
    assert_same(path, keyed, format="glove")


def test_fasttext_vec_with_tokens_cut_inside_utf8_fails_strict_naming_the_option() -> None:
    with pytest.raises(UnicodeDecodeError):
        KeyedVectors.load_word2vec_format(str(POLARITY))
    with load_error(POLARITY, "line 150: invalid UTF-8 at byte 0 of the line; "):
        load_table(POLARITY)
    with load_error(POLARITY, "unicode_errors='replace' or 'ignore' loads it"):
        load_table(POLARITY)


@pytest.mark.parametrize("errors", ["replace", "ignore"])
def test_fasttext_vec_with_tokens_cut_inside_utf8_loads_as_gensim(errors: str) -> None:
    keyed = KeyedVectors.load_word2vec_format(str(POLARITY), unicode_errors=errors)
    assert_same(POLARITY, keyed, unicode_errors=errors)


@pytest.mark.parametrize("limit", [1, 7, 1694, 5000])
def test_limit_is_gensims_limit_on_a_text_file(limit: int) -> None:
    keyed = KeyedVectors.load_word2vec_format(str(POLARITY), unicode_errors="replace", limit=limit)
    assert_same(POLARITY, keyed, unicode_errors="replace", limit=limit)


@pytest.mark.parametrize("limit", [1, 100, 2747, 9999])
def test_limit_is_gensims_limit_on_a_binary_file(limit: int) -> None:
    path = GENSIM_DATA / "euclidean_vectors.bin"
    keyed = KeyedVectors.load_word2vec_format(str(path), binary=True, limit=limit)
    assert_same(path, keyed, limit=limit)
