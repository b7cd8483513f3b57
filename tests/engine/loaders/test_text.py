"""The text formats (word2vec text, fastText .vec, GloVe) through the one text loader."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from service.engine.loaders import LoadOptions, detect_format, load_table, load_text
from tests.engine.loaders.helpers import TOKENS, assert_refused, assert_table, write_gensim


def test_word2vec_text_round_trips_gensim(tmp_path: Path, vectors: np.ndarray) -> None:
    path = write_gensim(tmp_path / "w2v.txt", vectors, binary=False)
    assert detect_format(path) == "word2vec-text"
    assert_table(load_text(path), vectors, path, exact=False)
    assert_table(load_table(path), vectors, path, exact=False)


def test_glove_round_trips_gensim_without_header(tmp_path: Path, vectors: np.ndarray) -> None:
    path = write_gensim(tmp_path / "glove.txt", vectors, binary=False, write_header=False)
    assert detect_format(path) == "glove"
    assert_table(load_text(path), vectors, path, exact=False)
    assert_table(load_table(path), vectors, path, exact=False)


def test_fasttext_vec_round_trips_gensim(tmp_path: Path, vectors: np.ndarray) -> None:
    path = write_gensim(tmp_path / "wiki.vec", vectors, binary=False)
    assert detect_format(path) == "fasttext"
    assert_table(load_text(path), vectors, path, exact=False)


def test_glove_tokens_may_contain_spaces(tmp_path: Path) -> None:
    path = tmp_path / "glove.840B.txt"
    path.write_text("new york 0.5 1.5\n. . . 2 3\n1 4 5\n", encoding="utf-8")
    table = load_text(path)
    assert table.tokens == ("new york", ". . .", "1")
    np.testing.assert_array_equal(table.vectors, [[0.5, 1.5], [2, 3], [4, 5]])


def test_text_accepts_tabs_crlf_bom_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "windows.txt"
    path.write_bytes("\ufeff2 2\r\na\t1\t2\r\n\r\nb  3 4 \r\n".encode())
    table = load_text(path)
    assert table.tokens == ("a", "b")
    np.testing.assert_array_equal(table.vectors, [[1, 2], [3, 4]])


def test_truncated_text(tmp_path: Path, vectors: np.ndarray) -> None:
    path = write_gensim(tmp_path / "w2v.txt", vectors, binary=False)
    cut = b"\n".join(path.read_bytes().split(b"\n")[:-3])
    problem = f"truncated: header says {len(TOKENS)} rows, found {len(TOKENS) - 2}"
    assert_refused(path, cut, problem, load_text)


WRONG_VALUES = ["king 1 2", "king 1 2 3 4", "king 1 2 x", "king"]
NON_FINITE = ["nan", "inf", "-inf", "1e999"]
# A damaged file's bytes, and what its error says.
BAD_FILES = [
    (b"1 2\na 1 2\nb 3 4\n", "header says 1 rows, found 2"),
    *[(f"3 3\nthe 1 2 3\nqueen 4 5 6\n{line}\n".encode(), "line 4: ") for line in WRONG_VALUES],
    *[
        (f"the 1 2\nking 3 {value}\n".encode(), "non-finite value (NaN or infinity) in row 1")
        for value in NON_FINITE
    ],
    (b"3 2\nthe 1 2\nking 3 4\nthe 5 6\n", "1 duplicate token(s), e.g. rows 0 and 2"),
    ("2 2\nthe 1 2\nnaïve 3 4\n".encode("latin-1"), "line 3: invalid UTF-8 at byte 2"),
]


@pytest.mark.parametrize(("content", "message"), BAD_FILES)
def test_a_damaged_text_file_is_refused_naming_what_is_wrong(
    tmp_path: Path, content: bytes, message: str
) -> None:
    assert_refused(tmp_path / "bad.txt", content, message, load_text)


def test_text_tokens_equal_after_replacement_are_reported(tmp_path: Path) -> None:
    content = b"3 2\na 1 2\ncaf\xe9 3 4\n\ncaf\xe8 5 6\n"
    problem = "line 3 and line 5 hold the same token once unicode_errors='ignore'"
    ignoring = LoadOptions(unicode_errors="ignore")
    assert_refused(tmp_path / "two.vec", content, problem, lambda path: load_text(path, ignoring))


def test_text_limit_stops_reading(tmp_path: Path) -> None:
    path = tmp_path / "long.txt"
    path.write_text("4 2\na 1 2\nb 3 4\nc 5 6\nnot even a row\n", encoding="utf-8")
    table = load_text(path, LoadOptions(limit=2))
    assert table.tokens == ("a", "b")
    np.testing.assert_array_equal(table.vectors, [[1, 2], [3, 4]])
    glove = tmp_path / "glove.txt"
    glove.write_text("new york 1 2\nb 3 4\nc x\n", encoding="utf-8")
    assert load_text(glove, LoadOptions(limit=2)).tokens == ("new york", "b")
