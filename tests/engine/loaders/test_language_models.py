"""Language-model folders load as they ship: found tables, padding, tied and untied heads."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from service.engine.loaders import LoadOptions, load_huggingface, load_table
from service.engine.tables.model import PADDING, TOKEN_TYPE
from tests.engine.loaders.helpers import load_error
from tests.language_models import (
    LLAMA_HEAD,
    LLAMA_INPUT,
    PADDED_ROWS,
    TOKENS,
    WIDTH,
    Model,
    bfloat16_bits,
    write_bfloat16,
    write_gpt2,
    write_json,
    write_llama,
)


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Model:
    return write_llama(tmp_path_factory.mktemp("llama") / "llama")


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory: pytest.TempPathFactory) -> Model:
    return write_gpt2(tmp_path_factory.mktemp("gpt2") / "gpt2")


def copy(model: Model, tmp_path: Path) -> Path:
    return Path(shutil.copytree(model.folder, tmp_path / model.folder.name))


def test_llama_folder_loads_with_no_options(llama: Model) -> None:
    table = load_table(llama.folder)
    assert (table.rows, table.width) == (PADDED_ROWS, WIDTH)
    # bfloat16 widened exactly, the head read from the other shard.
    np.testing.assert_array_equal(table.vectors, llama.rows)
    assert table.output is not None
    np.testing.assert_array_equal(table.output, llama.head)
    assert table.vectors.dtype == table.output.dtype == np.float32
    assert list(table.tokens[:TOKENS]) == llama.tokens
    assert table.model is not None
    assert table.model.head == LLAMA_HEAD
    assert table.model.input_tensor == LLAMA_INPUT
    assert table.model.stored_dtype == "BF16"
    assert table.model.total_parameters == llama.total_parameters
    assert table.model.pieces == "byte-level"
    assert table.tokenizer is not None


def test_padding_rows_are_named_marked_and_counted(llama: Model) -> None:
    table = load_table(llama.folder)
    assert table.model is not None
    assert (table.model.tokens, table.model.padding_rows) == (TOKENS, PADDED_ROWS - TOKENS)
    assert list(table.tokens[TOKENS:]) == [f"<row {row}>" for row in range(TOKENS, PADDED_ROWS)]
    types = list(table.metadata[TOKEN_TYPE])
    assert types[TOKENS:] == [PADDING] * (PADDED_ROWS - TOKENS)
    assert PADDING not in types[:TOKENS]
    assert table.searchable_rows == TOKENS


def test_gpt2_folder_is_tied(gpt2: Model) -> None:
    table = load_table(gpt2.folder)
    np.testing.assert_array_equal(table.vectors, gpt2.rows)
    assert table.output is None
    assert table.model is not None
    assert (table.model.head, table.model.input_tensor) == ("tied", "wte.weight")
    assert table.model.total_parameters == gpt2.total_parameters
    assert (table.model.padding_rows, table.searchable_rows) == (0, TOKENS)


def test_a_single_safetensors_file_loads(gpt2: Model) -> None:
    table = load_table(gpt2.folder / "model.safetensors")
    np.testing.assert_array_equal(table.vectors, gpt2.rows)


def test_the_tensor_option_still_overrides(gpt2: Model, tmp_path: Path) -> None:
    folder = copy(gpt2, tmp_path)
    other = np.arange(TOKENS * WIDTH, dtype=np.float32).reshape(TOKENS, WIDTH) / 1e4
    save_file({"wte.weight": gpt2.rows, "my.rows": other}, str(folder / "model.safetensors"))
    table = load_huggingface(folder, LoadOptions(tensor="my.rows"))
    np.testing.assert_array_equal(table.vectors, other)
    np.testing.assert_array_equal(load_huggingface(folder).vectors, gpt2.rows)


def test_ambiguity_names_the_candidates_and_the_option(gpt2: Model, tmp_path: Path) -> None:
    folder = copy(gpt2, tmp_path)
    rows = gpt2.rows
    save_file({"a.weight": rows, "b.weight": rows * 2}, str(folder / "model.safetensors"))
    with load_error(folder / "model.safetensors", "2 tensors could be the input embedding"):
        load_huggingface(folder)
    with pytest.raises(Exception, match=r"\(a\.weight, b\.weight\): pick one with the tensor"):
        load_huggingface(folder)


def test_a_missing_shard_is_named_by_the_index(llama: Model, tmp_path: Path) -> None:
    folder = copy(llama, tmp_path)
    (folder / "model-00002-of-00002.safetensors").unlink()
    index = folder / "model.safetensors.index.json"
    with load_error(index, "names 2 shard files, 1 of them missing from the folder"):
        load_huggingface(folder)


def test_a_tensor_of_the_wrong_rank(llama: Model, tmp_path: Path) -> None:
    folder = copy(llama, tmp_path)
    shard = folder / "model-00001-of-00002.safetensors"
    cube = bfloat16_bits(np.ones((PADDED_ROWS, WIDTH, 2)))
    write_bfloat16(shard, {LLAMA_INPUT: cube, "model.layers.0.mlp.up_proj.weight": cube[:2]})
    with load_error(shard, "the input embedding (tensor 1 of the header) has 3 dimensions"):
        load_huggingface(folder)


def test_a_config_that_contradicts_the_tensors(llama: Model, tmp_path: Path) -> None:
    folder = copy(llama, tmp_path)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    write_json(folder / "config.json", {**config, "hidden_size": WIDTH * 2})
    with load_error(folder / "config.json", f"the hidden size is {WIDTH * 2}, but the input"):
        load_huggingface(folder)


def test_untied_config_without_a_head(gpt2: Model, tmp_path: Path) -> None:
    folder = copy(gpt2, tmp_path)
    write_json(folder / "config.json", {"vocab_size": TOKENS, "tie_word_embeddings": False})
    with load_error(folder / "config.json", "tie_word_embeddings is false, but the tensors have"):
        load_huggingface(folder)


def test_fewer_rows_than_tokens_names_both_numbers(llama: Model, tmp_path: Path) -> None:
    folder = copy(llama, tmp_path)
    shard = folder / "model-00001-of-00002.safetensors"
    short = bfloat16_bits(llama.rows[: TOKENS - 10])
    write_bfloat16(shard, {LLAMA_INPUT: short, "model.layers.0.mlp.up_proj.weight": short[:2]})
    write_bfloat16(
        folder / "model-00002-of-00002.safetensors",
        {LLAMA_HEAD: short, "model.norm.weight": short[0]},
    )
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    write_json(folder / "config.json", {**config, "vocab_size": TOKENS - 10})
    expected = f"vocabulary has {TOKENS} tokens but llama has {TOKENS - 10} rows"
    with load_error(folder / "tokenizer.json", expected):
        load_huggingface(folder)
