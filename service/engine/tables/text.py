"""Text -> a table's rows: the model's own tokenizer, or the table's vocabulary.

A table that ships a Hugging Face `tokenizer.json` splits text exactly as its model does (the
`tokenizers` library, in Rust), with the file's padding and truncation switched off: a piece's
id is its row. Word tables (word2vec, GloVe, projector) have no tokenizer: their text is split
on whitespace and each word looked up as a token (exact, then the table's case fallback).

A text sent to find rows is words as people type them, so its first word starts a word, as if
a space came before it: on a byte-level model's table "king" is the row of " king" (`Ġking`),
not the piece `king` that ends "s|king" or starts a document. SentencePiece tokenizers put
that space in themselves (`▁king`); a model's table split by its vocabulary looks each word up
as the piece that starts a word first. `word_initial=False` reads the text as the start of a
document instead, as the model does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from service.engine.errors import TableLoadError, UnknownToken
from service.engine.files.reading import read_text
from service.engine.tables.pieces import BYTE_LEVEL, PLAIN, written
from service.engine.tables.table import EmbeddingTable

_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Word:
    """A word of a split text: its character span and how many pieces (rows) it became."""

    index: int
    start: int
    end: int
    pieces: int


@dataclass(frozen=True)
class Split:
    """One text cut into pieces: each piece a row, its character span and its word.

    `words[i]` is None for a piece that belongs to no word of the text (the special tokens a
    model adds around it). `matched` maps words found only through the case fallback to the
    token they matched.
    """

    text: str
    ids: list[int]
    offsets: list[tuple[int, int]]
    words: list[int | None]
    matched: dict[str, str] = field(default_factory=dict)

    def word_spans(self) -> list[Word]:
        """Each word once, in order: its span over its pieces and their number."""
        spans: dict[int, list[int]] = {}
        for (start, end), word in zip(self.offsets, self.words, strict=True):
            if word is None:
                continue
            span = spans.setdefault(word, [start, end, 0])
            span[0], span[1], span[2] = min(span[0], start), max(span[1], end), span[2] + 1
        return [Word(word, start, end, count) for word, (start, end, count) in spans.items()]


class TextTokenizer(Protocol):
    """What a served table splits text with."""

    kind: str

    def split(
        self, text: str, add_special_tokens: bool = False, word_initial: bool = True
    ) -> Split:
        """`text` as pieces of the table; its first word starts a word unless `word_initial`
        is False (then it starts a document)."""
        ...

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        """Rows back to text (ids already checked against the table)."""
        ...


class HuggingFaceTokenizer:
    """A model's tokenizer.json, checked against the table it came with."""

    kind = "huggingface"

    def __init__(self, tokenizer: Any) -> None:
        tokenizer.no_padding()
        tokenizer.no_truncation()
        self.tokenizer = tokenizer

    @classmethod
    def load(cls, path: Path, tokens: Sequence[str]) -> HuggingFaceTokenizer:
        """The tokenizer in `path`; TableLoadError unless its ids are exactly `tokens`' rows."""
        from tokenizers import Tokenizer  # imported only for tables that have a tokenizer

        text = read_text(path)  # its own TableLoadErrors (missing, confined, not UTF-8) stand
        try:
            tokenizer = Tokenizer.from_str(text)
        except Exception:  # the library raises plain Exception; its message can quote the file
            raise TableLoadError(
                path, "the tokenizers library cannot read it as a tokenizer"
            ) from None
        check_against_table(path, tokenizer.get_vocab(with_added_tokens=True), tokens)
        return cls(tokenizer)

    def split(
        self, text: str, add_special_tokens: bool = False, word_initial: bool = True
    ) -> Split:
        """The model's split: ids, character offsets and word indices from the library (whose
        own rule says whether a text's first word starts a word)."""
        encoding = self.tokenizer.encode(text, add_special_tokens=add_special_tokens)
        return Split(text, encoding.ids, encoding.offsets, encoding.word_ids)

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        """The model's decoder: word pieces joined, byte-level pieces turned back into text."""
        return str(self.tokenizer.decode(list(ids), skip_special_tokens=skip_special_tokens))


class WordInitialTokenizer:
    """A byte-level model's tokenizer, reading a text's first word as the start of a word.

    The space goes before the text rather than into the pre-tokenizer (the library's
    `add_prefix_space`): SmolLM's splits digits off first, and a prefix inside that sequence
    would go before every digit. A piece that is only that space is dropped, and the offsets
    stay the text's own.
    """

    def __init__(self, model: HuggingFaceTokenizer) -> None:
        self.model = model
        self.kind = model.kind

    def split(
        self, text: str, add_special_tokens: bool = False, word_initial: bool = True
    ) -> Split:
        """The model's split of " " + `text`, as a split of `text`."""
        if not word_initial or not text or text[0].isspace():
            return self.model.split(text, add_special_tokens)
        return _unspaced(text, self.model.split(" " + text, add_special_tokens))

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        """The model's decoder."""
        return self.model.decode(ids, skip_special_tokens)


def _unspaced(text: str, spaced: Split) -> Split:
    """A split of " " + `text` as a split of `text`: the space's own piece dropped, offsets one
    back."""
    ids, offsets, words = spaced.ids, spaced.offsets, spaced.words
    # Only the pieces before the first that reaches into the text can lie within the space;
    # a special token the model adds there has no word, and stays.
    first = next((i for i, (_, end) in enumerate(offsets) if end > 1), len(ids))
    dropped = {i for i in range(first) if words[i] is not None}
    if dropped:
        ids, offsets, words = _without(dropped, ids, offsets, words)
    shifted = [(max(start - 1, 0), max(end - 1, 0)) for start, end in offsets]
    return Split(text, ids, shifted, words)


def _without(
    dropped: set[int], ids: list[int], offsets: list[tuple[int, int]], words: list[int | None]
) -> tuple[list[int], list[tuple[int, int]], list[int | None]]:
    """The pieces but the `dropped`, their words numbered from 0 again."""
    kept = [i for i in range(len(ids)) if i not in dropped]
    left = [words[i] for i in kept]
    numbers = {word: n for n, word in enumerate(dict.fromkeys(w for w in left if w is not None))}
    renumbered = [None if word is None else numbers[word] for word in left]
    return [ids[i] for i in kept], [offsets[i] for i in kept], renumbered


def check_against_table(path: Path, vocabulary: dict[str, int], tokens: Sequence[str]) -> None:
    """TableLoadError unless the tokenizer's token -> id map is exactly the table's rows."""
    rows = len(tokens)
    if len(vocabulary) != rows:
        raise TableLoadError(
            path, f"the tokenizer has {len(vocabulary)} tokens but the table has {rows} rows"
        )
    beyond = [i for i in vocabulary.values() if not 0 <= i < rows]
    if beyond:
        raise TableLoadError(
            path, f"{len(beyond)} token id(s) beyond the table's {rows} rows, e.g. {max(beyond)}"
        )
    # Ids only, never the tokens: the file may be any file the process can read.
    differ = sorted(i for token, i in vocabulary.items() if tokens[i] != token)
    if differ:
        raise TableLoadError(
            path,
            f"the tokenizer's token differs from the table's vocabulary at {len(differ)} "
            f"id(s), the first at id {differ[0]}: it belongs to another model",
        )


class VocabularyTokenizer:
    """Whitespace-separated words, each looked up as a token of the table."""

    kind = "vocabulary"

    def __init__(self, table: EmbeddingTable, case_insensitive: bool = False, name: str = ""):
        self.table = table
        self.case_insensitive = case_insensitive
        self.name = name

    def split(
        self, text: str, add_special_tokens: bool = False, word_initial: bool = True
    ) -> Split:
        """One piece per word; UnknownToken names every word that is not a token."""
        ids, offsets, matched, unknown = [], [], {}, []
        for word in _WORD.finditer(text):
            row = self._find(word.group(), word_initial or word.start() > 0)
            if row is None:
                unknown.append(word.group())
                continue
            ids.append(row)
            offsets.append(word.span())
            if self.table.tokens[row] != word.group():
                matched[word.group()] = self.table.tokens[row]
        if unknown:
            raise UnknownToken(list(dict.fromkeys(unknown)), self.name)
        return Split(text, ids, offsets, list(range(len(ids))), matched)

    def _find(self, word: str, initial: bool) -> int | None:
        """A word's row: on a model's table the piece that starts a word (`▁king`) if there is
        one, else the token as written (`king`, `<s>`, `Ġking`)."""
        if initial and self.table.pieces != PLAIN:
            row = self.table.find(written(" " + word, self.table.pieces), self.case_insensitive)
            if row is not None:
                return row
        return self.table.find(word, self.case_insensitive)

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        """The rows' tokens joined by spaces."""
        return " ".join(self.table.tokens[i] for i in ids)


def text_tokenizer(
    table: EmbeddingTable, case_insensitive: bool = False, name: str = ""
) -> TextTokenizer:
    """The table's own tokenizer when it came with one (a byte-level model's reading a text's
    first word as a word), else its vocabulary."""
    if table.tokenizer is None:
        return VocabularyTokenizer(table, case_insensitive, name)
    # A static model's text is its embedding: split as the model pools it, and nothing else.
    if table.static is None and table.pieces == BYTE_LEVEL:
        return WordInitialTokenizer(table.tokenizer)
    return table.tokenizer


def mean_row(vectors: np.ndarray, ids: Sequence[int]) -> np.ndarray:
    """The mean of raw rows in float64: how a new vocabulary row is often initialised."""
    rows = np.asarray(ids, dtype=np.int64)
    return np.mean(vectors[rows].astype(np.float64), axis=0)
