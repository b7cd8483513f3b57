"""A model's tokenizer.json is loaded with its table, and refused when it does not match it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from service.engine.errors import TableLoadError
from service.engine.files.reading import confined
from service.engine.loaders import load_huggingface, load_table
from service.engine.tables.text import HuggingFaceTokenizer
from tests.engine.loaders.helpers import (
    BERT_TENSOR,
    TOKENS,
    load_error,
    write_tokenizer,
    write_vocab,
)


@pytest.fixture
def model(tmp_path: Path, vectors: np.ndarray) -> Path:
    """A model directory with its weights and vocab.txt, and no tokenizer.json yet."""
    folder = tmp_path / "model"
    folder.mkdir()
    save_file({BERT_TENSOR: vectors}, str(folder / "model.safetensors"))
    write_vocab(folder / "vocab.txt", TOKENS)
    return folder


def test_a_matching_tokenizer_splits_text_into_rows(model: Path) -> None:
    write_tokenizer(model / "tokenizer.json", TOKENS)
    table = load_huggingface(model)
    assert isinstance(table.tokenizer, HuggingFaceTokenizer)
    split = table.tokenizer.split("the kings king queen")
    assert [table.tokens[i] for i in split.ids] == ["the", "kings", "king", "[UNK]"]
    assert split.offsets == [(0, 3), (4, 9), (10, 14), (15, 20)]


def test_without_a_tokenizer_file_there_is_none(model: Path) -> None:
    assert load_huggingface(model).tokenizer is None


def test_more_tokens_than_rows(model: Path) -> None:
    write_tokenizer(model / "tokenizer.json", [*TOKENS, "extra"])
    with load_error(model / "tokenizer.json", "the tokenizer has 8 tokens but the table has 7"):
        load_huggingface(model)


def test_ids_beyond_the_rows(model: Path) -> None:
    ids = [0, 1, 2, 3, 4, 5, 70]
    write_tokenizer(model / "tokenizer.json", TOKENS, ids)
    with load_error(model / "tokenizer.json", "1 token id(s) beyond the table's 7 rows, e.g. 70"):
        load_huggingface(model)


def test_tokens_of_another_model(model: Path) -> None:
    swapped = [TOKENS[1], TOKENS[0], *TOKENS[2:]]
    write_tokenizer(model / "tokenizer.json", swapped)
    with load_error(model / "tokenizer.json", "differs from the table's vocabulary at 2 id(s)"):
        load_huggingface(model)
    with pytest.raises(TableLoadError) as caught:
        load_huggingface(model)
    assert TOKENS[1] not in str(caught.value)  # ids only: the file is never quoted


def test_a_file_the_library_cannot_read(model: Path) -> None:
    (model / "tokenizer.json").write_text('{"model": {"type": "Nonsense"}}', encoding="utf-8")
    with load_error(model / "tokenizer.json", "cannot read it as a tokenizer"):
        load_huggingface(model)


def test_a_limited_load_splits_by_its_vocabulary(model: Path) -> None:
    write_tokenizer(model / "tokenizer.json", TOKENS)
    table = load_table(model, limit=3)
    assert table.rows == 3
    assert table.tokenizer is None  # the model's split could name rows that were not loaded


def test_a_confined_load_reads_no_tokenizer_outside_its_folder(model: Path, tmp_path: Path) -> None:
    outside = write_tokenizer(tmp_path / "elsewhere.json", TOKENS)
    (model / "tokenizer.json").symlink_to(outside)
    with confined(model), load_error(model / "tokenizer.json", "resolves outside"):
        load_huggingface(model)
