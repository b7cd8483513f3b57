"""A remote table's keys, fetched as they are needed and kept: gensim's index_to_key and
key_to_index without downloading the vocabulary.

A key is present when a lookup answers exactly that token: a table served with the
case-insensitive fallback answers "KING" with the row of "king", which gensim would not, so
such a match counts as absent here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import overload

import numpy as np

from embedding_service.client import Client
from embedding_service.errors import UnknownToken

# Keys fetched per page of index_to_key (the lookup itself is split into max_batch requests).
PAGE_ROWS = 4096
# The service accepts tokens of 1 to 256 characters (its Token schema); no other string can
# name one of its rows.
MAX_TOKEN_LENGTH = 256


class Vocabulary:
    """Which row each key is, and which key each row is, as far as asked so far."""

    def __init__(self, client: Client, table: str, rows: int) -> None:
        self.client = client
        self.table = table
        self.rows = rows
        self._index_of: dict[str, int | None] = {}
        self._pages: dict[int, list[str]] = {}
        self._norms: dict[int, np.ndarray] = {}

    def index(self, key: str) -> int | None:
        """The row of `key`, or None when the table has no such key."""
        return self.indexes([key])[key]

    def indexes(self, keys: Sequence[str]) -> dict[str, int | None]:
        """The row of each key (None: absent), asking the server only about new keys."""
        pending = [key for key in dict.fromkeys(keys) if key not in self._index_of]
        for key in pending:
            if not 1 <= len(key) <= MAX_TOKEN_LENGTH:
                self._index_of[key] = None
        self._resolve([key for key in pending if key not in self._index_of])
        return {key: self._index_of[key] for key in keys}

    def remember(self, key: str, index: int | None) -> None:
        """Keep what another answer said of `key`."""
        self._index_of[key] = index

    def _resolve(self, keys: list[str]) -> None:
        while keys:
            try:
                found = self.client.lookup(self.table, keys, include_vector=False)
            except UnknownToken as error:
                missing = set(error.tokens) & set(keys)
                if not missing:
                    raise
                self._index_of.update(dict.fromkeys(missing))
                keys = [key for key in keys if key not in missing]
                continue
            for key, token, index in zip(keys, found.tokens, found.ids, strict=True):
                self._index_of[key] = index if token == key else None
            return

    def key_at(self, index: int) -> str:
        """The key of row `index` (0 <= index < rows)."""
        if not 0 <= index < self.rows:
            raise IndexError(f"row {index} is outside the table's {self.rows} rows")
        start = index - index % PAGE_ROWS
        return self._page(start)[index - start]

    def keys_between(self, start: int, stop: int) -> list[str]:
        """The keys of rows start to stop - 1, fetched a page at a time."""
        keys: list[str] = []
        for page in range(start - start % PAGE_ROWS, stop, PAGE_ROWS):
            keys.extend(self._page(page)[max(start - page, 0) : stop - page])
        return keys

    def norms_between(self, start: int, stop: int) -> np.ndarray:
        """The norms of rows start to stop - 1 (float32, as the server has them), a page at a
        time."""
        pages = range(start - start % PAGE_ROWS, stop, PAGE_ROWS)
        for page in pages:
            self._page(page)
        norms = [self._norms[page][max(start - page, 0) : stop - page] for page in pages]
        return np.concatenate(norms) if norms else np.empty(0, np.float32)

    def _page(self, start: int) -> list[str]:
        if start not in self._pages:
            ids = range(start, min(start + PAGE_ROWS, self.rows))
            found = self.client.lookup(self.table, ids=list(ids), include_vector=False)
            self._pages[start] = found.tokens
            self._norms[start] = found.norms.astype(np.float32)
            self._index_of.update(zip(found.tokens, ids, strict=True))
        return self._pages[start]


class IndexToKey(Sequence[str]):
    """gensim's index_to_key: row -> key, paged from the server as it is read."""

    def __init__(self, vocabulary: Vocabulary) -> None:
        self._vocabulary = vocabulary

    def __len__(self) -> int:
        return self._vocabulary.rows

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        rows = self._vocabulary.rows
        if isinstance(index, slice):
            start, stop, step = index.indices(rows)
            if step != 1:
                return [self[i] for i in range(start, stop, step)]
            return self._vocabulary.keys_between(start, stop) if start < stop else []
        position = index + rows if index < 0 else index
        return self._vocabulary.key_at(position)

    def __iter__(self) -> Iterator[str]:
        for start in range(0, self._vocabulary.rows, PAGE_ROWS):
            yield from self._vocabulary.keys_between(start, start + PAGE_ROWS)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._vocabulary.index(key) is not None


class KeyToIndex(Mapping[str, int]):
    """gensim's key_to_index: key -> row, asked of the server per key and kept."""

    def __init__(self, vocabulary: Vocabulary) -> None:
        self._vocabulary = vocabulary

    def __getitem__(self, key: str) -> int:
        index = self._vocabulary.index(key) if isinstance(key, str) else None
        if index is None:
            raise KeyError(key)
        return index

    def __len__(self) -> int:
        return self._vocabulary.rows

    def __iter__(self) -> Iterator[str]:
        return iter(IndexToKey(self._vocabulary))
