"""Vocabulary: tokens in flat arrays, found by an open-addressing hash table."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine.errors import TableLoadError
from service.engine.tables.table import EmbeddingTable
from service.engine.tables.vocabulary import EMPTY, Vocabulary, _place, build_slots


@settings(max_examples=80, deadline=None)
@given(tokens=st.lists(st.text(max_size=12), unique=True, max_size=200))
def test_every_token_is_found_on_its_row_and_others_are_not(tokens: list[str]) -> None:
    vocabulary = Vocabulary.of(tokens)
    assert len(vocabulary) == len(tokens)
    assert list(vocabulary) == tokens
    for row, token in enumerate(tokens):
        assert vocabulary[row] == token
        assert vocabulary.find(token) == row
    assert vocabulary.find("\x00never a token\x00") is None
    assert vocabulary.duplicate_rows() is None


def test_case_folded_lookups_find_the_lowest_row_of_the_variants() -> None:
    vocabulary = Vocabulary.of(["Apple", "apple", "APPLE", "Straße", "pear"])
    assert vocabulary.find_folded("aPPle") == 0
    assert vocabulary.find_folded("STRASSE") == 3  # casefold, not lower
    assert vocabulary.find_folded("plum") is None
    assert vocabulary.find("aPPle") is None


def test_duplicates_are_reported_by_row() -> None:
    with pytest.raises(TableLoadError, match=r"2 duplicate token\(s\), e.g. rows 0 and 4"):
        EmbeddingTable(["a", "b", "c", "b", "a"], np.ones((5, 2), np.float32))


def test_slicing_indexing_and_equality_behave_like_a_tuple() -> None:
    tokens = ["x", "y", "z"]
    vocabulary = Vocabulary.of(tokens)
    assert vocabulary[-1] == "z" and vocabulary[1:] == ["y", "z"]
    assert vocabulary == tuple(tokens) and vocabulary == tokens
    assert "y" in vocabulary and "w" not in vocabulary
    assert vocabulary.index("z") == 2
    assert vocabulary.take(np.array([2, 0])) == ["z", "x"]
    with pytest.raises(IndexError):
        vocabulary[3]


def test_keys_past_the_end_of_the_table_wrap_round_to_free_slots() -> None:
    # Home slots crowd the end of an 8-slot table: the last keys wrap to slots 0 and 1.
    placed = _place(np.array([5, 6, 6, 7, 7]), 8)
    assert placed.tolist() == [5, 6, 7, 0, 1]


def test_probing_wraps_round_the_end_of_a_full_region() -> None:
    tokens = [f"token-{i}" for i in range(3000)]
    vocabulary = Vocabulary.of(tokens)
    slots = vocabulary.slots
    assert (slots != EMPTY).sum() == 3000 and slots.size >= 1.5 * 3000
    assert all(vocabulary.find(token) == row for row, token in enumerate(tokens))
    again = build_slots(vocabulary.hashes())
    np.testing.assert_array_equal(again, slots)  # the same placement every time
