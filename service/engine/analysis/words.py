"""Whole-word rows: the rows a table's default picture shows (the projection's "words").

A model's vocabulary begins with what no one looks for in a picture: BERT's thousand
`[unusedN]` rows and its single characters, a byte-level model's byte pieces and mid-word
pieces. A row is a *word* when the text its token stands for is one:

- plain tokens (word2vec, GloVe, projector files, WordPiece vocabularies such as MiniLM's):
  at least two characters, every one a letter (`str.isalpha`, so any script), which leaves
  out `[CLS]`, `##ing`, punctuation, numbers and single characters;
- byte-level BPE (`Ġking`) and SentencePiece (`▁king`): a word-initial piece, its text a space
  then at least three letters; the mid-word piece `king` is not one. Three, not two: the first
  merges of such a vocabulary are word starts (`▁th`, `▁de`, `▁re`), and a two-letter
  word-initial piece is more often one of them than a word.

`first_words` takes the first such rows in row order (frequency order in word2vec, GloVe and
projector files, merge order in BPE vocabularies), skipping rows the caller excludes (the
reference and suspect rows of the table's diagnostics), then fills up with the other rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from service.engine.tables.pieces import PLAIN, readable

# Fewer letters are mostly single characters and initials rather than words.
MIN_LETTERS = 2
MIN_PIECE_LETTERS = 3


def is_word(token: str, style: str) -> bool:
    """Whether `token` (written in `style`: pieces.STYLES) stands for a whole word."""
    if style == PLAIN:
        return len(token) >= MIN_LETTERS and token.isalpha()
    text, incomplete = readable(token, style)
    letters = text[1:]
    return (
        not incomplete
        and text.startswith(" ")
        and len(letters) >= MIN_PIECE_LETTERS
        and letters.isalpha()
    )


def first_words(
    tokens: Sequence[str], style: str, rows: np.ndarray, count: int, excluded: np.ndarray
) -> tuple[np.ndarray, int]:
    """(up to `count` of `rows`, how many of them are words): the first word rows not in
    `excluded`, in row order, then the first other rows of `rows` if there are too few."""
    skip = set(excluded.tolist())
    words: list[int] = []
    for row in rows.tolist():
        if len(words) == count:
            break
        if row not in skip and is_word(tokens[row], style):
            words.append(row)
    chosen = np.asarray(words, dtype=np.int64)
    if chosen.size < count:
        others = rows[~np.isin(rows, chosen)][: count - chosen.size]
        return np.sort(np.concatenate([chosen, others])), int(chosen.size)
    return chosen, int(chosen.size)
