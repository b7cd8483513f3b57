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

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import chain
from typing import Any, Literal

import numpy as np

from service.engine.errors import InvalidQuery
from service.engine.tables.table import EmbeddingTable

Library = Literal["model2vec", "wordllama"]
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
    model = static_of(table)
    assert table.tokenizer is not None
    if model.max_characters is not None:
        texts = [text[: model.max_characters] for text in texts]
    encodings = table.tokenizer.tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)
    pieces = [encoding.ids[: model.max_tokens] for encoding in encodings]
    if model.unknown_id is not None:
        unknown = model.unknown_id
        pieces = [[piece for piece in ids if piece != unknown] for ids in pieces]
    return pieces


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
    rows' mean over the first `dimensions` components, normalised as the model (or as asked)."""
    model = static_of(table)
    width = check_dimensions(model, table.width, dimensions)
    counts = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
    ids = np.fromiter(chain.from_iterable(pieces), dtype=np.int64, count=int(counts.sum()))
    rows = table.vectors[ids, :width].astype(np.float64)
    if model.weights is not None:
        rows *= model.weights[ids, None]
    sums = np.zeros((len(pieces), width))
    found = counts > 0
    if found.any():
        # One sum per split that has pieces: each runs from its first row to the next's.
        starts = np.cumsum(counts) - counts
        sums[found] = np.add.reduceat(rows, starts[found], axis=0)
    means = (sums / np.maximum(counts, 1)[:, None]).astype(np.float32)
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
