"""Static embedding models: a table whose text embedding is a pooled lookup of its rows.

Model2Vec's distilled models and WordLlama embed a text without a network: its pieces by the
model's own tokenizer (no special tokens), each piece's row (times its weight, when the model
has per-token weights), the mean, and an optional L2 normalisation. `StaticEmbedding` holds
what the model's own files say of that recipe, and `embed` follows it to the library's answer:

    Model2Vec's StaticModel.encode    the text cut to max_length x the median token length in
                                      characters, its first max_length pieces, the unknown
                                      piece dropped, the weighted rows' mean (sum / pieces),
                                      divided by (its norm + 1e-32) when config.json says
                                      normalize
    WordLlama's embed                 every piece (no truncation), the rows' mean, not
                                      normalised (embed's norm=False); truncations to its
                                      Matryoshka widths (the first d components)

A text with no pieces (empty, or only pieces the model drops) is the zero vector, as both
libraries answer (normalised, Model2Vec's answer too: WordLlama's would divide by zero).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

from service.engine.errors import InvalidQuery
from service.engine.tables.layout import Layout
from service.engine.tables.table import EmbeddingTable

Library = Literal["model2vec", "wordllama"]
# How a static model's rows are held (tables/layout.py), whatever the table's spec asks of the
# loader (an explicit `layout` is still honoured after the load): a text's pieces are whole
# rows, gathered about 8 times as fast from rows stored one after another as by columns (64
# Lee corpus lines, WordLlama's table). Exact neighbour passes run at the rows layout's speed.
HELD_BY: Layout = "rows"
# Model2Vec's normalisation adds this to the norm, so a zero vector stays zero.
NORM_EPSILON = 1e-32


@dataclass(frozen=True, eq=False)
class StaticEmbedding:
    """How a static model turns text into a vector, as its own files say (module docstring)."""

    library: Library
    normalize: bool
    # Pieces pooled at most (the first ones); None: every piece.
    max_tokens: int | None = None
    # Characters read at most, before splitting (Model2Vec: max_length x the median token
    # length); None: the whole text.
    max_characters: int | None = None
    # The piece the model drops from every split (Model2Vec's unknown token), if any.
    unknown_id: int | None = None
    # The widths the rows may be cut to (Matryoshka); empty: only the full width.
    dimensions: tuple[int, ...] = ()
    # Per-token weights, float32, one per row (Model2Vec's `weights` tensor).
    weights: np.ndarray | None = None
    pooling: Literal["mean"] = "mean"

    def to_json(self) -> dict[str, Any]:
        """The facts as plain JSON, weights left out (a prepared folder stores them apart)."""
        facts = asdict(self)
        facts.pop("weights")
        facts["dimensions"] = list(self.dimensions)
        return facts

    @classmethod
    def of_json(cls, facts: dict[str, Any], weights: np.ndarray | None) -> StaticEmbedding:
        """The facts `to_json` wrote, with their weights."""
        return cls(**{**facts, "dimensions": tuple(facts["dimensions"]), "weights": weights})


def static_of(table: EmbeddingTable) -> StaticEmbedding:
    """The table's static model; InvalidQuery when it is a plain table (no pooling to follow)."""
    if table.static is None or table.tokenizer is None:
        raise InvalidQuery(
            "this table is not a static embedding model (Model2Vec, WordLlama): it has rows, "
            "but no pooling that makes a text one vector"
        )
    return table.static


def split_texts(table: EmbeddingTable, texts: Sequence[str]) -> list[list[int]]:
    """Each text's pieces as the model pools them: cut, split without special tokens, the
    first max_tokens kept, then the unknown piece dropped (Model2Vec's order)."""
    return [pieces for pieces, _ in cut_splits(table, texts)]


def cut_splits(table: EmbeddingTable, texts: Sequence[str]) -> list[tuple[list[int], bool]]:
    """split_texts, with whether the model left part of each text unread (max_characters or
    max_tokens cut it)."""
    model = static_of(table)
    assert table.tokenizer is not None
    most = model.max_characters
    read = list(texts) if most is None else [text[:most] for text in texts]
    encodings = table.tokenizer.tokenizer.encode_batch_fast(read, add_special_tokens=False)
    splits = []
    for text, encoding in zip(texts, encodings, strict=True):
        ids = encoding.ids
        cut = (most is not None and len(text) > most) or (
            model.max_tokens is not None and len(ids) > model.max_tokens
        )
        splits.append((kept_pieces(model, ids), cut))
    return splits


def kept_pieces(model: StaticEmbedding, ids: Sequence[int]) -> list[int]:
    """Pieces given as ids (already the tokenizer's), kept as `split_texts` keeps a split's."""
    kept = list(ids[: model.max_tokens])
    return kept if model.unknown_id is None else [i for i in kept if i != model.unknown_id]


def pool(
    table: EmbeddingTable,
    pieces: Sequence[Sequence[int]],
    normalize: bool | None = None,
    dimensions: int | None = None,
) -> np.ndarray:
    """The embeddings (float32, one row per split) of splits given as row ids: the weighted
    rows' mean over the first `dimensions` components, normalised as the model (or as asked).

    One gather and one float64 sum per split: a split's rows are whole rows of a table held
    row after row (the loaders' layout), where one gather of every split's rows and one
    np.add.reduceat took 8 times as long on the Lee corpus's lines.
    """
    model = static_of(table)
    width = check_dimensions(model, table.width, dimensions)
    vectors, weights = table.vectors, model.weights
    means = np.zeros((len(pieces), width), dtype=np.float32)
    for row, ids in enumerate(pieces):
        if not len(ids):
            continue  # no pieces: the zero vector, as both libraries answer
        rows = vectors[ids][:, :width]
        if weights is not None:
            rows = rows * weights[ids, None]
        means[row] = rows.sum(axis=0, dtype=np.float64) / len(ids)
    if model.normalize if normalize is None else normalize:
        norms = np.linalg.norm(means, axis=1, keepdims=True)
        means /= norms + np.float32(NORM_EPSILON)
    return means


def check_dimensions(model: StaticEmbedding, width: int, dimensions: int | None) -> int:
    """The width to cut the rows to: all of them, or one of the model's Matryoshka widths."""
    if dimensions is None or dimensions == width:
        return width
    if dimensions not in model.dimensions:
        allowed = [d for d in model.dimensions if d < width]
        offered = (
            f"one of {', '.join(map(str, allowed))} or {width}"
            if allowed
            else f"only its full width, {width}: it was not trained to be cut (no Matryoshka "
            "widths in its files)"
        )
        raise InvalidQuery(
            f"dimensions {dimensions} is not a width this model can answer in: {offered}",
            dimensions=dimensions,
            allowed=[*allowed, width],
        )
    return dimensions


def embed(
    table: EmbeddingTable,
    texts: Sequence[str],
    normalize: bool | None = None,
    dimensions: int | None = None,
) -> np.ndarray:
    """The texts' embeddings as the model's library computes them (module docstring)."""
    return pool(table, split_texts(table, texts), normalize, dimensions)


@dataclass(frozen=True, eq=False)
class TextItem:
    """One request's inputs: texts, or splits given as ids, and how to answer them."""

    table: EmbeddingTable
    texts: Sequence[str] = ()
    ids: Sequence[Sequence[int]] = ()
    normalize: bool | None = None
    dimensions: int | None = None

    @property
    def cost(self) -> int:
        """Its inputs: what a batch's size counts."""
        return len(self.texts) + len(self.ids)


@dataclass(frozen=True)
class Embedded:
    """One request's embeddings (a row per input), the pieces each pooled, and whether the
    model left part of each unread."""

    vectors: np.ndarray
    pieces: list[int]
    cut: list[bool]


def embed_items(items: Sequence[TextItem]) -> list[Embedded]:
    """Every request's embeddings, in order: the texts of one table split together (one call
    of the tokenizer), then each request's pooled. Items are checked before (static tables,
    ids, dimensions): nothing here refuses one."""
    splits: list[list[tuple[list[int], bool]]] = [[] for _ in items]
    by_table: dict[int, list[int]] = defaultdict(list)
    for index, item in enumerate(items):
        if item.texts:
            by_table[id(item.table)].append(index)
        else:
            assert item.table.static is not None
            splits[index] = [(kept_pieces(item.table.static, ids), False) for ids in item.ids]
    for indices in by_table.values():
        texts = [text for i in indices for text in items[i].texts]
        split = iter(cut_splits(items[indices[0]].table, texts))
        for i in indices:
            splits[i] = [next(split) for _ in items[i].texts]
    return [_pooled(item, split) for item, split in zip(items, splits, strict=True)]


def _pooled(item: TextItem, splits: list[tuple[list[int], bool]]) -> Embedded:
    pieces = [ids for ids, _ in splits]
    vectors = pool(item.table, pieces, item.normalize, item.dimensions)
    return Embedded(vectors, [len(ids) for ids in pieces], [cut for _, cut in splits])
