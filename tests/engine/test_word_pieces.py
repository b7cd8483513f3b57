"""A text's first word read as a word on language models' tables: `year` finds `Ġyear` or
`▁year` (the row of the word), not the piece that ends another word or starts a document.

The oracle is the `tokenizers` library's own split of the text with a space before it, or the
tokenizer's own vocabulary; the tables are written as the models ship (tests/language_models).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gensim.test.utils import datapath
from tokenizers import Tokenizer, processors

from service.engine.errors import UnknownToken
from service.engine.loaders import load_table
from service.engine.search.cosine import CosineSearch
from service.engine.session import Session
from service.engine.tables.pieces import BYTE_LEVEL, SENTENCEPIECE, readable, written
from service.engine.tables.table import EmbeddingTable
from service.engine.tables.text import (
    HuggingFaceTokenizer,
    TextTokenizer,
    WordInitialTokenizer,
    text_tokenizer,
)
from tests.language_models import (
    byte_level_tokenizer,
    sentencepiece_tokenizer,
    smollm2,
    write_gguf,
    write_gpt2,
)

# Words with a row of their own after a space (`Ġyear`) and, in the byte-level vocabulary, a
# different row without one (`year`); `said` has only the former (bare, it is s|a|id).
WORDS = ["year", "work", "said", "though"]


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory: pytest.TempPathFactory) -> EmbeddingTable:
    return load_table(write_gpt2(tmp_path_factory.mktemp("gpt2") / "gpt2").folder)


@pytest.fixture(scope="module")
def library() -> Tokenizer:
    return Tokenizer.from_str(byte_level_tokenizer())


def tokens(table: EmbeddingTable, text: TextTokenizer, words: str, **how: bool) -> list[str]:
    return [table.tokens[row] for row in text.split(words, **how).ids]


def lee_lines(count: int) -> list[str]:
    lines = Path(datapath("lee_background.cor")).read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and line.isascii()][:count]


def test_a_byte_level_word_is_the_row_after_a_space(gpt2: EmbeddingTable, library) -> None:
    text = text_tokenizer(gpt2)
    for word in WORDS:
        assert text.split(word).ids == library.encode(" " + word).ids
        assert tokens(gpt2, text, word) == ["Ġ" + word]
    assert tokens(gpt2, text, "year", word_initial=False) == ["year"]  # a document's start
    assert tokens(gpt2, text, "said", word_initial=False) == library.encode("said").tokens


def test_a_byte_level_text_splits_as_the_library_after_a_space(
    gpt2: EmbeddingTable, library
) -> None:
    """Whole lines: the library's ids for " " + line; offsets cut the line itself, the first
    piece's text its own but for the space."""
    text = text_tokenizer(gpt2)
    for line in lee_lines(50):
        split = text.split(line)
        assert split.ids == library.encode(" " + line).ids
        assert "".join(line[start:end] for start, end in split.offsets) == line
        pieces = [readable(gpt2.tokens[row], BYTE_LEVEL)[0] for row in split.ids]
        assert [line[start:end] for start, end in split.offsets] == [pieces[0][1:], *pieces[1:]]
        assert split.words[0] == 0 and sorted(set(split.words)) == list(range(max(split.words) + 1))


def test_a_text_that_starts_with_a_space_is_split_as_it_is(gpt2: EmbeddingTable, library) -> None:
    text = text_tokenizer(gpt2)
    for words in [" year", "\nyear", "  year said"]:
        assert text.split(words).ids == library.encode(words).ids


def test_the_space_alone_is_no_piece(tmp_path: Path) -> None:
    """A pre-tokenizer that splits digits off first leaves the added space a piece of its own
    (SmolLM's): it is dropped, and the digits keep their offsets."""
    table = load_table(write_gguf(tmp_path / "model.gguf", pre="smollm").folder)
    text = text_tokenizer(table)
    split = text.split("2024")
    assert [table.tokens[row] for row in split.ids] == ["2", "0", "2", "4"]
    assert split.offsets == [(0, 1), (1, 2), (2, 3), (3, 4)] and split.words == [0, 1, 2, 3]
    assert text.split("<|endoftext|>").ids == [0]  # the special token, without the space


def test_special_tokens_the_model_adds_stay() -> None:
    """A model that starts every text with a special token (Llama 3's <|begin_of_text|>)."""
    library = Tokenizer.from_str(byte_level_tokenizer())
    library.post_processor = processors.TemplateProcessing(
        single="<|endoftext|> $A", special_tokens=[("<|endoftext|>", 0)]
    )
    text = WordInitialTokenizer(HuggingFaceTokenizer(library))
    split = text.split("year said", add_special_tokens=True)
    assert split.ids == library.encode(" year said").ids
    assert split.offsets == [(0, 0), (0, 4), (4, 9)] and split.words == [None, 0, 1]


def test_a_byte_level_table_split_by_its_vocabulary(tmp_path: Path) -> None:
    """A pre-tokenizer the library cannot reproduce: each word is the piece after a space if
    there is one, else the token as written."""
    table = load_table(write_gguf(tmp_path / "model.gguf", pre="qwen2").folder)
    assert table.tokenizer is None
    text = text_tokenizer(table)
    split = text.split("year said vernment Ġwork")
    assert [table.tokens[row] for row in split.ids] == ["Ġyear", "Ġsaid", "vernment", "Ġwork"]
    assert split.matched == {"year": "Ġyear", "said": "Ġsaid"}
    assert tokens(table, text, "year work", word_initial=False) == ["year", "Ġwork"]


def test_a_sentencepiece_gguf_word_is_the_row_that_starts_a_word(tmp_path: Path) -> None:
    table = load_table(write_gguf(tmp_path / "model.gguf", model="llama").folder)
    assert table.pieces == SENTENCEPIECE and table.tokenizer is None
    text = text_tokenizer(table)
    vocabulary = Tokenizer.from_str(sentencepiece_tokenizer()).get_vocab()
    split = text.split("year said ing")
    assert split.ids == [vocabulary["\u2581year"], vocabulary["\u2581said"], vocabulary["ing"]]
    assert split.matched == {"year": "\u2581year", "said": "\u2581said"}
    with pytest.raises(UnknownToken):
        text.split("king")  # neither ▁king nor king: no silent other row


def test_a_sentencepiece_tokenizer_puts_its_own_space(tmp_path: Path) -> None:
    """Metaspace writes the word's space itself: the model's split, untouched."""
    model = write_gpt2(tmp_path / "sp", tokenizer=sentencepiece_tokenizer())
    table = load_table(model.folder)
    assert table.pieces == SENTENCEPIECE
    text = text_tokenizer(table)
    assert text is table.tokenizer
    library = Tokenizer.from_str(sentencepiece_tokenizer())
    for word in WORDS:
        assert tokens(table, text, word) == ["\u2581" + word] == library.encode(word).tokens


@pytest.mark.parametrize(
    ("text", "style", "token"),
    [
        (" king", BYTE_LEVEL, "Ġking"),
        (" café", BYTE_LEVEL, "ĠcafÃ©"),
        ("\u2019", BYTE_LEVEL, "âĢĻ"),
        (" king", SENTENCEPIECE, "\u2581king"),
        (" king", "plain", " king"),
    ],
)
def test_written_is_readables_inverse(text: str, style: str, token: str) -> None:
    assert written(text, style) == token
    assert readable(token, style) == (text, False)


@pytest.mark.slow
def test_smollm2_king_is_the_word() -> None:
    """SmolLM2's own tokenizer, rebuilt from its GGUF: "king" is `Ġking`, whose neighbours (by
    numpy, in float64) are ĠKing, King, Ġkings; its digits stay one a piece."""
    table = load_table(smollm2())
    text = text_tokenizer(table)
    [row] = text.split("king").ids
    assert table.tokens[row] == "Ġking" and tokens(table, text, "2024") == list("2024")
    assert tokens(table, text, "king", word_initial=False) == ["king"]
    vectors = np.asarray(table.vectors, dtype=np.float64)
    cosines = (
        vectors @ vectors[row] / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(vectors[row]))
    )
    cosines[row] = -np.inf
    top = np.argsort(-cosines, kind="stable")[:3]
    found = Session(table, CosineSearch(table)).most_similar(positive=["Ġking"], topn=3)
    assert [token for token, _ in found] == [table.tokens[i] for i in top]
    assert [token for token, _ in found] == ["ĠKing", "King", "Ġkings"]
