"""Static embedding models through the engine: embed(texts) equals the models' own libraries.

The oracles are the libraries themselves: Model2Vec's StaticModel.encode on a folder its own
save_pretrained wrote, and WordLlama's embed on the model inside its package, on 200 lines of
gensim's Lee corpus and the edge cases (tests/static_models.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from service.engine.errors import InvalidQuery
from service.engine.loaders import detect_format, load_table
from service.engine.tables.embedding import embed, kept_pieces, pool, split_texts
from service.engine.tables.prepared import open_prepared, write_prepared
from service.engine.tables.table import EmbeddingTable
from tests.static_models import (
    EDGE_TEXTS,
    model2vec_folder,
    model2vec_oracle,
    texts,
    wordllama_oracle,
    wordllama_weights,
)

# float32 precision: both libraries sum float32 rows; the engine sums them in float64.
TOLERANCE = 1e-5
# StaticModel's options: its defaults; weights, normalised and a short max_length (16 pieces,
# 96 characters: most Lee lines are cut); and no truncation at all.
MODEL2VEC_OPTIONS = {
    "defaults": {},
    "weighted": {"weights": True, "normalize": True, "max_length": 16},
    "untruncated": {"max_length": None},
}


@pytest.fixture(scope="module", params=list(MODEL2VEC_OPTIONS))
def model2vec(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("model2vec") / request.param
    return model2vec_folder(folder, **MODEL2VEC_OPTIONS[request.param])


@pytest.fixture(scope="module")
def wordllama() -> EmbeddingTable:
    return load_table(wordllama_weights())


@pytest.fixture(scope="module")
def wordllama_library(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return wordllama_oracle(tmp_path_factory.mktemp("wordllama-cache"))


def test_a_model2vec_folder_is_recognised_and_equals_encode(model2vec: Path) -> None:
    assert detect_format(model2vec) == "model2vec"
    table = load_table(model2vec)
    expected = model2vec_oracle(model2vec).encode(texts())
    answered = embed(table, texts())
    assert answered.dtype == np.float32 and answered.shape == expected.shape
    np.testing.assert_allclose(answered, expected, rtol=0, atol=TOLERANCE)


def test_model2vec_reads_its_recipe_from_config_and_tokenizer(tmp_path: Path) -> None:
    folder = model2vec_folder(tmp_path / "m", weights=True, normalize=True, max_length=16)
    oracle = model2vec_oracle(folder)
    static = load_table(folder).static
    assert static is not None and static.library == "model2vec"
    assert static.normalize and static.max_tokens == 16
    assert static.max_characters == 16 * oracle.median_token_length
    assert static.unknown_id == oracle.unk_token_id
    assert static.weights is not None
    np.testing.assert_array_equal(static.weights, oracle.weights)


def test_model2vec_drops_unknown_pieces_and_answers_zero_for_none(model2vec: Path) -> None:
    table = load_table(model2vec)
    assert table.static is not None
    [pieces] = split_texts(table, ["🦜 Ελληνικά"])
    assert pieces == []  # two unknown words: their [UNK] pieces are dropped
    [vector] = embed(table, ["🦜 Ελληνικά"])
    assert not vector.any()
    np.testing.assert_array_equal(vector, model2vec_oracle(model2vec).encode(["🦜 Ελληνικά"])[0])


def test_wordllama_is_recognised_and_equals_embed(
    wordllama: EmbeddingTable, wordllama_library: Any
) -> None:
    assert detect_format(wordllama_weights()) == "wordllama"
    expected = wordllama_library.embed(texts())
    np.testing.assert_allclose(embed(wordllama, texts()), expected, rtol=0, atol=TOLERANCE)


def test_wordllama_normalised_equals_embed_with_norm(
    wordllama: EmbeddingTable, wordllama_library: Any
) -> None:
    some = [text for text in texts() if text]  # WordLlama's norm divides the empty text by 0
    expected = wordllama_library.embed(some, norm=True)
    np.testing.assert_allclose(embed(wordllama, some, True), expected, rtol=0, atol=TOLERANCE)
    [empty] = embed(wordllama, [""], True)
    assert not empty.any()  # Model2Vec's answer for a text with no pieces: zero, not NaN


@pytest.mark.parametrize("width", [64, 128])
def test_wordllama_cut_to_a_matryoshka_width_equals_trunc_dim(
    wordllama: EmbeddingTable, width: int, tmp_path: Path
) -> None:
    expected = wordllama_oracle(tmp_path, trunc_dim=width).embed(texts())
    answered = embed(wordllama, texts(), dimensions=width)
    np.testing.assert_allclose(answered, expected, rtol=0, atol=TOLERANCE)


def test_wordllama_reads_its_widths_and_no_truncation(wordllama: EmbeddingTable) -> None:
    static = wordllama.static
    assert static is not None and static.library == "wordllama"
    assert static.dimensions == (64, 128, 256)
    assert not static.normalize and static.max_tokens is None and static.weights is None
    assert wordllama.rows == 32_000 and wordllama.width == 256


def test_dimensions_outside_the_model_s_widths_are_refused(
    wordllama: EmbeddingTable, model2vec: Path
) -> None:
    with pytest.raises(InvalidQuery, match="64, 128 or 256"):
        embed(wordllama, ["a"], dimensions=100)
    table = load_table(model2vec)
    with pytest.raises(InvalidQuery, match="only its full width, 384"):
        embed(table, ["a"], dimensions=128)
    assert embed(table, ["a"], dimensions=384).shape == (1, 384)


def test_a_plain_table_embeds_no_text(minilm: EmbeddingTable) -> None:
    with pytest.raises(InvalidQuery, match="not a static embedding model"):
        embed(minilm, ["hello"])


def test_pieces_given_as_ids_pool_as_the_text_would(model2vec: Path) -> None:
    table = load_table(model2vec)
    assert table.static is not None and table.tokenizer is not None
    text = "the quick brown fox jumps over the lazy dog " * 3
    ids = table.tokenizer.tokenizer.encode(text, add_special_tokens=False).ids
    by_ids = pool(table, [kept_pieces(table.static, ids)])
    np.testing.assert_array_equal(by_ids, embed(table, [text]))


def test_a_batch_equals_its_texts_one_at_a_time(wordllama: EmbeddingTable) -> None:
    batch = embed(wordllama, EDGE_TEXTS)
    alone = np.vstack([embed(wordllama, [text]) for text in EDGE_TEXTS])
    np.testing.assert_array_equal(batch, alone)


def test_a_prepared_static_model_embeds_as_its_source(model2vec: Path, tmp_path: Path) -> None:
    table = load_table(model2vec)
    prepared = open_prepared(write_prepared(table, tmp_path / "prepared"))
    assert prepared.static is not None and table.static is not None
    assert prepared.static.to_json() == table.static.to_json()
    np.testing.assert_array_equal(embed(prepared, texts()), embed(table, texts()))
