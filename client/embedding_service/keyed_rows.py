"""The keys and rows of a served table as gensim's KeyedVectors has them: get_index,
get_vector, [], `in`, index_to_key and key_to_index, vector_size, get_mean_vector.

Rows come from lookups (the table's float32 rows, bit for bit); a key is present only when the
server answers exactly that key (a case-insensitive fallback match is gensim's KeyError).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from embedding_service import vector_math
from embedding_service.client import Client
from embedding_service.errors import UnknownToken
from embedding_service.models.answers import MatchedNames
from embedding_service.vocabulary import MAX_TOKEN_LENGTH, IndexToKey, KeyToIndex, Vocabulary


class KeyedRows:
    """A served table's keys and rows, fetched as they are asked for."""

    def __init__(self, client: Client, table: str) -> None:
        self.client = client
        self.table = table
        info = client.table(table)
        self.vector_size = info.width
        self._vocabulary = Vocabulary(client, table, info.rows)
        self.index_to_key = IndexToKey(self._vocabulary)
        self.key_to_index = KeyToIndex(self._vocabulary)

    def __len__(self) -> int:
        return self._vocabulary.rows

    @property
    def vectors(self) -> np.ndarray:
        """Not held here: the table stays on the server (look rows up by key instead)."""
        raise AttributeError(
            "RemoteKeyedVectors holds no vectors array: the table stays on the server; use "
            "kv[keys] or kv.get_vector(key) for the rows you need"
        )

    def get_index(self, key: Any, default: int | None = None) -> int:
        """The row of `key` (a key, or a row number); `default`, else KeyError, if absent."""
        index = self._vocabulary.index(key) if isinstance(key, str) else None
        if index is not None:
            return index
        if isinstance(key, int | np.integer) and 0 <= key < len(self):
            return int(key)
        if default is not None:
            return default
        raise KeyError(f"Key '{key}' not present")

    def has_index_for(self, key: Any) -> bool:
        """Whether `key` names a row."""
        return self.get_index(key, -1) >= 0

    def __contains__(self, key: Any) -> bool:
        return self.has_index_for(key)

    def get_vector(self, key: Any, norm: bool = False) -> np.ndarray:
        """The row of `key` (unit length with norm=True), read-only."""
        row = self.rows([key])[0]
        if norm:
            row = (row / np.linalg.norm(row)).astype(row.dtype)
        row.setflags(write=False)
        return row

    def __getitem__(self, key_or_keys: Any) -> np.ndarray:
        if isinstance(key_or_keys, str | int | np.integer):
            return self.get_vector(key_or_keys)
        return self.rows(list(key_or_keys))

    def rows(self, keys: Sequence[Any]) -> np.ndarray:
        """The rows of `keys` (keys or row numbers) as an (n, width) float32 array, in order."""
        names = [key for key in keys if isinstance(key, str)]
        numbers = [self.get_index(key) for key in keys if not isinstance(key, str)]
        by_name = iter(self._rows_by_name(names) if names else ())
        by_number = iter(self._rows_by_number(numbers) if numbers else ())
        rows = [next(by_name) if isinstance(key, str) else next(by_number) for key in keys]
        return np.stack(rows) if rows else np.zeros((0, self.vector_size), np.float32)

    def _rows_by_name(self, names: list[str]) -> np.ndarray:
        unqueryable = [name for name in names if not 1 <= len(name) <= MAX_TOKEN_LENGTH]
        if unqueryable:
            raise KeyError(f"Key '{unqueryable[0]}' not present")
        try:
            found = self.client.lookup(self.table, names)
        except UnknownToken as error:
            missing = set(error.tokens)
            raise KeyError(f"Key '{next(n for n in names if n in missing)}' not present") from None
        for name, token, index in zip(names, found.tokens, found.ids, strict=True):
            if token != name:  # the case fallback answered another key's row
                raise KeyError(f"Key '{name}' not present")
            self._vocabulary.remember(name, index)
        assert found.vectors is not None
        return found.vectors

    def _rows_by_number(self, indexes: list[int]) -> np.ndarray:
        found = self.client.lookup(self.table, ids=indexes)
        assert found.vectors is not None
        return found.vectors

    def get_mean_vector(
        self,
        keys: Sequence[Any],
        weights: Sequence[float] | None = None,
        pre_normalize: bool = True,
        post_normalize: bool = False,
        ignore_missing: bool = True,
    ) -> np.ndarray:
        """gensim's get_mean_vector: the weighted mean of keys' rows (or given vectors)."""
        if len(keys) == 0:
            raise ValueError("cannot compute mean with no input")
        weight = np.ones(len(keys), np.float32) if weights is None else np.asarray(weights)
        if len(keys) != weight.shape[0]:
            raise ValueError("keys and weights array must have same number of elements")
        present = [i for i, found in enumerate(self._present(keys)) if found]
        if not ignore_missing and len(present) < len(keys):
            missing = next(key for i, key in enumerate(keys) if i not in present)
            raise KeyError(f"Key '{missing}' not present in vocabulary")
        if not present:
            return np.zeros(self.vector_size, np.float32)
        vectors = self._vectors([keys[i] for i in present], pre_normalize)
        return vector_math.mean_vector(vectors, [weight[i] for i in present], post_normalize)

    def _present(self, keys: Sequence[Any]) -> list[bool]:
        """Whether each key names a row (a vector always counts), asking about keys at once."""
        names = [key for key in keys if isinstance(key, str)]
        known = self._vocabulary.indexes(names) if names else {}
        return [
            isinstance(key, np.ndarray)
            or (known[key] is not None if isinstance(key, str) else self.has_index_for(key))
            for key in keys
        ]

    def _vectors(self, keys: Sequence[Any], unit: bool) -> list[np.ndarray]:
        """Given vectors as they are, keys' rows (unit length if asked), in order."""
        named = [key for key in keys if not isinstance(key, np.ndarray)]
        rows = iter(self.rows(named) if named else ())
        looked_up = [key if isinstance(key, np.ndarray) else next(rows) for key in keys]
        if not unit:
            return looked_up
        pairs = zip(keys, looked_up, strict=True)
        return [v if isinstance(k, np.ndarray) else v / np.linalg.norm(v) for k, v in pairs]

    def _key(self, key: Any) -> str:
        """A key as the service names it (row numbers by their key)."""
        if isinstance(key, str):
            return key
        return self.index_to_key[self.get_index(key)]


def refuse_fallback(matched: MatchedNames) -> None:
    """KeyError for a key only the table's case fallback matched: gensim has no such key."""
    for asked, stored in matched.items():
        if isinstance(stored, str):  # only a case fallback maps a key to another key
            raise KeyError(f"Key '{asked}' not present in vocabulary")
