"""Static models' files: what is recognised, and each refusal naming the file and the problem."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from service.config import default_table
from service.engine.errors import TableLoadError
from service.engine.loaders import detect_format, load_table
from service.engine.loaders.model2vec_folders import load_model2vec
from service.engine.loaders.wordllama_files import load_wordllama
from service.engine.tables.embedding import embed
from tests.static_models import minilm_slice, model2vec_folder, wordllama_weights


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return model2vec_folder(tmp_path_factory.mktemp("m2v") / "model")


def copy_of(folder: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy"
    shutil.copytree(folder, target)
    return target


def test_a_model_folder_without_embeddings_stays_huggingface() -> None:
    assert detect_format(Path(str(default_table().path))) == "huggingface"


def test_a_vocabulary_quantised_model_is_refused(tmp_path: Path) -> None:
    from model2vec import StaticModel

    vectors, tokenizer = minilm_slice()
    mapping = np.arange(len(vectors)) % 100  # 100 rows shared by every token
    model = StaticModel(vectors[:100], tokenizer, token_mapping=mapping)
    model.save_pretrained(tmp_path / "quantised")
    with pytest.raises(TableLoadError, match="vocabulary-quantised"):
        load_table(tmp_path / "quantised")


def test_token_weights_must_be_one_float_per_row(folder: Path, tmp_path: Path) -> None:
    copy = copy_of(folder, tmp_path)
    vectors, _ = minilm_slice()
    tensors = {"embeddings": vectors, "weights": np.ones(len(vectors) - 1, np.float32)}
    save_file(tensors, copy / "model.safetensors")
    with pytest.raises(TableLoadError, match=r"token weights .* not one per row \(8000\)"):
        load_table(copy)


@pytest.mark.parametrize(
    ("config", "problem"),
    [({"normalize": "yes"}, "normalize is not true or false"),
     ({"max_length": 0}, "max_length is not a positive integer or null")],
)  # fmt: skip
def test_a_config_that_contradicts_model2vec_is_refused(
    folder: Path, tmp_path: Path, config: dict[str, object], problem: str
) -> None:
    copy = copy_of(folder, tmp_path)
    (copy / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(TableLoadError, match=problem) as raised:
        load_table(copy)
    assert raised.value.path.endswith("config.json")


def test_a_missing_config_means_model2vec_s_defaults(folder: Path, tmp_path: Path) -> None:
    copy = copy_of(folder, tmp_path)
    (copy / "config.json").write_text("{}", encoding="utf-8")
    static = load_table(copy).static
    assert static is not None and not static.normalize and static.max_tokens == 512


def test_a_limit_does_not_apply_to_a_static_model(folder: Path) -> None:
    with pytest.raises(TableLoadError, match="limit does not apply"):
        load_table(folder, limit=10)
    with pytest.raises(TableLoadError, match="limit does not apply"):
        load_table(wordllama_weights(), limit=10)


def test_a_model2vec_model_is_a_folder(folder: Path) -> None:
    with pytest.raises(TableLoadError, match="a Model2Vec model is a folder"):
        load_model2vec(folder / "model.safetensors")


def test_wordllama_s_tokenizer_may_sit_beside_its_weights(tmp_path: Path) -> None:
    weights = wordllama_weights()
    shutil.copy(weights, tmp_path)
    tokenizer = weights.parent.parent / "tokenizers" / "l2_supercat_tokenizer_config.json"
    shutil.copy(tokenizer, tmp_path)
    copy = tmp_path / weights.name
    assert detect_format(copy) == "wordllama"
    table = load_table(copy)
    # No training configuration beside it: no Matryoshka widths, the same vectors.
    assert table.static is not None and table.static.dimensions == ()
    np.testing.assert_array_equal(embed(table, ["a text"]), embed(load_table(weights), ["a text"]))


def test_wordllama_weights_without_their_tokenizer_are_refused(tmp_path: Path) -> None:
    shutil.copy(wordllama_weights(), tmp_path)
    copy = tmp_path / wordllama_weights().name
    assert detect_format(copy) == "huggingface"  # not recognised as WordLlama's
    with pytest.raises(TableLoadError, match="no WordLlama tokenizer file found"):
        load_table(copy, "wordllama")


def test_binary_wordllama_weights_are_refused(tmp_path: Path) -> None:
    binary = tmp_path / "l2_supercat_256_binary.safetensors"
    shutil.copy(wordllama_weights(), binary)
    with pytest.raises(TableLoadError, match="binary weights are not served"):
        load_wordllama(binary)
