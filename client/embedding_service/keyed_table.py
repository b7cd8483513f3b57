"""What gensim's KeyedVectors computes over the whole table it holds: the rows' norms, the unit
rows, a key's attributes, and save() in gensim's own format.

The table stays on the server, so these page it in (PAGE_ROWS rows a client call, each cut into
max_batch requests): `fill_norms` reads every row's norm, `get_normed_vectors` and `save` every
row. `norms` is None until asked for, as in a gensim KeyedVectors no search has filled yet
(gensim's searches fill it; the server's searches need no norms here).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from embedding_service.keyed_ranking import KeyedRanking
from embedding_service.keyed_saving import Page, gensim_value, write_keyed_vectors
from embedding_service.vocabulary import PAGE_ROWS


class KeyedTable(KeyedRanking):
    """The whole-table parts of gensim's KeyedVectors, paged in from the server."""

    norms: np.ndarray | None = None

    def fill_norms(self, force: bool = False) -> None:
        """gensim's fill_norms: every row's L2 norm in `norms` (float32, as the server has it)."""
        if self.norms is None or force:
            self.norms = self._vocabulary.norms_between(0, len(self))

    def get_normed_vectors(self) -> np.ndarray:
        """Every row over its norm: the whole table as an (n, width) float32 array."""
        rows = np.empty((len(self), self.vector_size), np.float32)
        for page in self.pages():
            rows[page.start : page.start + len(page.keys)] = page.rows
        norms = np.linalg.norm(rows, axis=1)  # gensim's fill_norms of the rows themselves
        if self.norms is None:
            self.norms = norms
        return np.divide(rows, norms[..., np.newaxis], out=rows)

    def get_vecattr(self, key: Any, attr: str) -> Any:
        """gensim's get_vecattr: the table's metadata column `attr` for `key` (KeyError when
        the table has no such column), typed as gensim stores it (int64, float64, str)."""
        index = self.get_index(key)
        metadata = self.client.lookup(self.table, ids=[index], include_vector=False).metadata[0]
        if attr not in metadata:
            raise KeyError(attr)
        return gensim_value(metadata[attr])

    def words_closer_than(self, word1: Any, word2: Any) -> list[str]:
        """gensim's deprecated name for closer_than."""
        warnings.warn(
            "Call to deprecated `words_closer_than` (Use closer_than instead).",
            category=DeprecationWarning,
            stacklevel=2,
        )
        return self.closer_than(word1, word2)

    def save(self, fname_or_handle: str | os.PathLike[str]) -> None:
        """The table in gensim's format, which `KeyedVectors.load(path)` opens: `path` and its
        rows in `path.vectors.npy`. Refuses (RefusedOverwrite) to replace files it did not
        write."""
        if not isinstance(fname_or_handle, str | os.PathLike):
            raise TypeError("save takes a path: the rows go to a file beside it, path.vectors.npy")
        source = f"{self.client.url}, table {self.table!r}"
        shape = (len(self), self.vector_size)
        write_keyed_vectors(Path(fname_or_handle), shape, self.pages(), source)

    def pages(self) -> Iterator[Page]:
        """Every row of the table with its key and metadata, a page at a time, in order."""
        for start in range(0, len(self), PAGE_ROWS):
            ids = list(range(start, min(start + PAGE_ROWS, len(self))))
            found = self.client.lookup(self.table, ids=ids)
            assert found.vectors is not None
            yield Page(start, found.tokens, found.vectors, found.metadata)
