"""Whole-word rows: which tokens are words in each way of writing them, and the first of them."""

from __future__ import annotations

import unicodedata

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.engine.analysis.projection import Projector
from service.engine.analysis.words import first_words, is_word
from service.engine.tables.pieces import BYTE_LEVEL, PLAIN, SENTENCEPIECE, byte_decoder
from service.engine.tables.table import EmbeddingTable


def byte_level(text: str) -> str:
    """`text` written as a byte-level BPE token (GPT-2's printable character for each byte)."""
    encoder = {byte: character for character, byte in byte_decoder().items()}
    return "".join(encoder[byte] for byte in text.encode("utf-8"))


@pytest.mark.parametrize(
    ("token", "style", "word"),
    [
        ("the", PLAIN, True),
        ("of", PLAIN, True),
        ("Zürich", PLAIN, True),
        ("中国", PLAIN, True),
        ("a", PLAIN, False),  # a single character
        ("##ing", PLAIN, False),  # a WordPiece continuation
        ("[unused0]", PLAIN, False),
        ("[CLS]", PLAIN, False),
        ("km²", PLAIN, False),
        ("1990s", PLAIN, False),
        ("don't", PLAIN, False),
        (byte_level(" king"), BYTE_LEVEL, True),
        (byte_level(" 中国人"), BYTE_LEVEL, True),
        ("king", BYTE_LEVEL, False),  # the mid-word piece
        (byte_level(" th"), BYTE_LEVEL, False),  # two letters: a word start more often
        (byte_level(" 2024"), BYTE_LEVEL, False),
        ("Ġâ", BYTE_LEVEL, False),  # part of a character's bytes
        ("\u2581king", SENTENCEPIECE, True),
        ("\u2581th", SENTENCEPIECE, False),
        ("king", SENTENCEPIECE, False),
        ("<0x41>", SENTENCEPIECE, False),
        ("<s>", SENTENCEPIECE, False),
    ],
)
def test_is_word(token: str, style: str, word: bool) -> None:
    assert is_word(token, style) is word


def letters_only(token: str) -> bool:
    """The rule for plain tokens, from Unicode's categories rather than str.isalpha."""
    return len(token) >= 2 and all(unicodedata.category(c).startswith("L") for c in token)


TOKENS = st.lists(st.text(alphabet="ab1#é中 ", min_size=0, max_size=4), min_size=1, max_size=40)


@given(TOKENS, st.integers(0, 45), st.sets(st.integers(0, 39), max_size=10))
def test_the_first_words_then_the_first_others(
    tokens: list[str], count: int, excluded: set[int]
) -> None:
    rows = np.arange(len(tokens), dtype=np.int64)
    skip = np.array(sorted(excluded), dtype=np.int64)
    chosen, words = first_words(tokens, PLAIN, rows, count, skip)
    eligible = [row for row in rows.tolist() if letters_only(tokens[row]) and row not in excluded]
    assert words == min(count, len(eligible))
    expected_words = eligible[:words]
    others = [row for row in rows.tolist() if row not in expected_words]
    expected = sorted(expected_words + others[: max(0, count - words)])
    assert chosen.tolist() == expected
    assert len(chosen) == min(count, len(tokens))


def test_zero_rows_are_never_chosen() -> None:
    vectors = np.eye(4, dtype=np.float32)
    vectors[1] = 0
    table = EmbeddingTable(["apple", "pear", "x", "plum"], vectors)
    chosen, words = Projector(table).select_words(4, np.empty(0, dtype=np.int64))
    assert chosen.tolist() == [0, 2, 3] and words == 2
