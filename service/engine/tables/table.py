"""EmbeddingTable: tokens, their ids (row numbers), raw float32 rows and per-token metadata."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from service.engine.errors import TableLoadError, UnknownId, UnknownToken
from service.engine.tables.layout import BLOCK_ROWS, Layout, as_layout, layout_of, row_norms
from service.engine.tables.pieces import PLAIN
from service.engine.tables.vocabulary import TokenIds, Vocabulary

if TYPE_CHECKING:
    from service.engine.tables.checkpoints import Checkpoints
    from service.engine.tables.embedding import StaticEmbedding
    from service.engine.tables.model import ModelFacts
    from service.engine.tables.text import HuggingFaceTokenizer

MetadataValue = int | float | str


@dataclass(frozen=True, eq=False)
class EmbeddingTable:
    """An immutable embedding table; construction validates it or raises TableLoadError.

    A prepared table (prepared.py) was validated when it was written: it is opened with
    `checked=True` and its stored float64 norms, so opening never passes over its rows.
    """

    # Given as any sequence; held as a Vocabulary (also as `vocabulary`, typed as one).
    tokens: Sequence[str]
    vectors: np.ndarray
    metadata: Mapping[str, Sequence[MetadataValue]] = field(default_factory=dict)
    source: str = "<memory>"
    # The model's own tokenizer, when the table came with one that matches its rows.
    tokenizer: HuggingFaceTokenizer | None = field(default=None, repr=False)
    stored_norms: np.ndarray | None = field(default=None, repr=False)
    checked: bool = field(default=False, repr=False)
    # The earlier versions of these rows, when the table is the last of a checkpoint set.
    checkpoints: Checkpoints | None = field(default=None, repr=False)
    # A language model's output table when it is untied (row i scores token i next), and what
    # the table knows of its model (tables/model.py): None for a plain table.
    output: np.ndarray | None = field(default=None, repr=False)
    model: ModelFacts | None = field(default=None, repr=False)
    # A static embedding model's recipe for a text's vector (tables/embedding.py): None for a
    # table that only names rows.
    static: StaticEmbedding | None = field(default=None, repr=False)
    # How the rows are held (tables/layout.py): unchecked rows are laid out so at construction
    # (a loader that fills a blank array in this layout hands over its one copy as it is);
    # afterwards, the layout the rows are held in, whatever was asked.
    layout: Layout = field(default="columns", repr=False, compare=False)
    # Set from the above: plain attributes, not properties, as every query reads them.
    vocabulary: Vocabulary = field(init=False, repr=False, compare=False)
    rows: int = field(init=False, repr=False, compare=False)
    width: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        vocabulary = Vocabulary.of(self.tokens)
        object.__setattr__(self, "tokens", vocabulary)
        object.__setattr__(self, "vocabulary", vocabulary)
        if not self.checked:
            vectors = _as_float32_rows(self.vectors, self.source, self.layout)
            object.__setattr__(self, "vectors", vectors)
        object.__setattr__(self, "layout", layout_of(self.vectors))
        object.__setattr__(self, "rows", int(self.vectors.shape[0]))
        object.__setattr__(self, "width", int(self.vectors.shape[1]))
        if not self.checked:
            _check_tokens(self.vocabulary, self.rows, self.source)
        _check_metadata(self.metadata, self.rows, self.source)
        if self.checkpoints is not None:
            _check_checkpoints(self.checkpoints, self.vectors.shape, self.source)
        if self.output is not None:
            if not self.checked:
                output = _as_float32_rows(self.output, self.source, "columns")
                object.__setattr__(self, "output", output)
            _check_output(self.output.shape, self.vectors.shape, self.source)

    @property
    def parameters(self) -> int:
        """Number of stored parameters, rows x width."""
        return self.rows * self.width

    @property
    def scoring_rows(self) -> np.ndarray:
        """The rows that score the next token: the output table when untied, else the rows."""
        return self.vectors if self.output is None else self.output

    @property
    def pieces(self) -> str:
        """How a model's tokens are written (tables/pieces.py): byte-level, sentencepiece or
        plain."""
        return PLAIN if self.model is None else self.model.pieces

    @cached_property
    def searchable_rows(self) -> int:
        """The rows a search covers unless it asks for more: all but a model's padding."""
        return self.rows if self.model is None else min(self.rows, self.model.tokens)

    @cached_property
    def norms64(self) -> np.ndarray:
        """float64 L2 norm of every raw row: stored with a prepared table, else computed."""
        if self.stored_norms is not None:
            return self.stored_norms
        return row_norms(self.vectors)

    @cached_property
    def norms(self) -> np.ndarray:
        """L2 norm of every raw row (float32)."""
        return self.norms64.astype(np.float32)

    @property
    def token_to_id(self) -> Mapping[str, int]:
        """Exact token -> row number."""
        return TokenIds(self.vocabulary)

    def resolve(self, tokens: Iterable[str], case_insensitive: bool = False) -> np.ndarray:
        """Row numbers of `tokens`; raises UnknownToken naming every token not found."""
        ids, unknown = [], []
        for token in tokens:
            i = self.find(token, case_insensitive)
            if i is None:
                unknown.append(token)
            ids.append(-1 if i is None else i)
        if unknown:
            raise UnknownToken(unknown)
        return np.asarray(ids, dtype=np.int64)

    def find(self, token: str, case_insensitive: bool = False) -> int | None:
        """Row number of `token`, trying its case-folded form if asked; None when absent."""
        i = self.vocabulary.find(token)
        if i is None and case_insensitive:
            i = self.vocabulary.find_folded(token)
        return i

    def check_ids(self, ids: Iterable[int]) -> np.ndarray:
        """`ids` as an int64 array; raises UnknownId naming every id outside the rows."""
        array = np.asarray(list(ids), dtype=np.int64)
        bad = array[(array < 0) | (array >= self.rows)]
        if bad.size:
            raise UnknownId([int(i) for i in bad], self.rows)
        return array

    def metadata_of(self, row: int) -> dict[str, MetadataValue]:
        """Every metadata column's value for one row."""
        return {name: column[row] for name, column in self.metadata.items()}


def in_layout(table: EmbeddingTable, layout: Layout) -> EmbeddingTable:
    """`table` with its rows held in `layout` ('columns' or 'rows': tables/layout.py): itself
    when they already are, else the same table over a copy of its rows made BLOCK_ROWS at a
    time (the old copy goes with the old table). A language model's output table stays by
    columns: it is only ever scored whole."""
    if table.layout == layout:
        return table
    vectors = as_layout(table.vectors, layout)
    return replace(table, vectors=vectors, stored_norms=table.norms64, checked=True)


def _as_float32_rows(vectors: Any, source: str, layout: Layout) -> np.ndarray:
    array = np.asarray(vectors)
    if array.ndim != 2:
        raise TableLoadError(source, f"expected a 2-D matrix of rows, got shape {array.shape}")
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise TableLoadError(source, f"table is empty (shape {array.shape})")
    if not np.issubdtype(array.dtype, np.floating):
        raise TableLoadError(source, f"expected floating-point rows, got dtype {array.dtype}")
    array = as_layout(array, layout)
    bad_row = _first_non_finite_row(array)
    if bad_row is not None:
        raise TableLoadError(source, f"non-finite value (NaN or infinity) in row {bad_row}")
    return array


def _first_non_finite_row(array: np.ndarray) -> int | None:
    # In blocks: one mask of the whole table would be a quarter of its size again.
    for start in range(0, len(array), BLOCK_ROWS):
        finite = np.isfinite(array[start : start + BLOCK_ROWS]).all(axis=1)
        if not finite.all():
            return start + int(np.flatnonzero(~finite)[0])
    return None


def _check_tokens(tokens: Vocabulary, rows: int, source: str) -> None:
    if len(tokens) != rows:
        raise TableLoadError(
            source, f"vocabulary has {len(tokens)} tokens but the matrix has {rows} rows"
        )
    duplicates = tokens.duplicate_rows()
    if duplicates is not None:
        # Rows, not the tokens: a table's source may be a file that must not be quoted.
        count, first, again = duplicates
        raise TableLoadError(source, f"{count} duplicate token(s), e.g. rows {first} and {again}")


def _check_metadata(metadata: Mapping[str, Sequence[Any]], rows: int, source: str) -> None:
    for name, column in metadata.items():
        if len(column) != rows:
            raise TableLoadError(
                source, f"metadata column {name!r} has {len(column)} values for {rows} rows"
            )


def _check_output(shape: tuple[int, ...], rows: tuple[int, ...], source: str) -> None:
    if shape != rows:
        raise TableLoadError(
            source, f"the output table is {shape[0]} x {shape[1]}, the rows {rows[0]} x {rows[1]}"
        )


def _check_checkpoints(checkpoints: Checkpoints, shape: tuple[int, ...], source: str) -> None:
    if len(checkpoints.labels) != len(checkpoints.earlier) + 1:
        raise TableLoadError(source, "a checkpoint set needs one label per checkpoint")
    for label, rows in zip(checkpoints.labels, checkpoints.earlier, strict=False):
        if rows.shape != shape or rows.dtype != np.float32:
            raise TableLoadError(source, f"checkpoint {label!r} is not float32 rows of {shape}")
