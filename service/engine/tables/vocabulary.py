"""Vocabulary: a table's tokens in a few flat arrays, so millions of them open in no time.

A Python tuple of 3,000,000 tokens and a dict to find them cost seconds to build and hundreds
of MB per process (measured: 4.3 s for the dict alone on the development machine). Here the
tokens are one UTF-8 byte string with an offset per row, and finding a token is an open
addressing hash table of row numbers (linear probing, a stable hash: zlib's CRC-32 mixed by a
Fibonacci multiplier), kept in arrays too. All of it can be memory-mapped from a prepared table
(prepared.py): opening reads nothing, and every worker process shares one copy in the page
cache. A second table finds a token's case-folded form (the lowest row among its variants).

Building from a list of tokens is vectorised: the hashes are one C call per token, the slots
are placed by one sort (see `_place`).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, overload

import numpy as np

# Hash table slots per token at least this many (load factor at most 2/3): a missing token
# probes a few slots on average.
SLOTS_PER_TOKEN = 1.5
EMPTY = -1
_GOLDEN = 0x9E3779B1  # Fibonacci hashing: spreads CRC-32's bits over the top bits used


class PackedStrings(Sequence[str]):
    """Strings by row as one UTF-8 byte string and an offset per row (tokens, text columns)."""

    def __init__(self, blob: Any, offsets: np.ndarray) -> None:
        # `blob` is bytes or an mmap.mmap: slicing either gives bytes without a copy of it all.
        self.blob = blob
        self.offsets = offsets

    @staticmethod
    def pack(encoded: Sequence[bytes]) -> tuple[bytes, np.ndarray]:
        """(blob, offsets) of strings given as their UTF-8 bytes."""
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return b"".join(encoded), offsets

    @classmethod
    def of_strings(cls, values: Sequence[str]) -> PackedStrings:
        """The packed form of `values`."""
        return PackedStrings(*cls.pack([encode(value) for value in values]))

    def __len__(self) -> int:
        return int(self.offsets.size) - 1

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return self.take(np.arange(len(self))[index])
        row = int(index)
        if row < 0:
            row += len(self)
        if not 0 <= row < len(self):
            raise IndexError(f"row {index} outside the {len(self)} rows")
        start, end = self.offsets[row : row + 2].tolist()
        return str(self.blob[start:end].decode("utf-8", "surrogatepass"))

    def __iter__(self) -> Iterator[str]:
        chunk = 65_536
        for first in range(0, len(self), chunk):
            yield from self.take(np.arange(first, min(first + chunk, len(self))))

    def take(self, rows: Sequence[int] | np.ndarray) -> list[str]:
        """The strings of `rows`, in order (one gather of the offsets for all of them)."""
        rows = np.asarray(rows, dtype=np.int64)
        starts, ends = self.offsets[rows].tolist(), self.offsets[rows + 1].tolist()
        blob = self.blob
        return [
            blob[start:end].decode("utf-8", "surrogatepass")
            for start, end in zip(starts, ends, strict=True)
        ]


class Vocabulary(PackedStrings):
    """The tokens of a table by row, with exact and case-folded lookups."""

    def __init__(
        self,
        blob: Any,
        offsets: np.ndarray,
        slots: np.ndarray,
        folded_slots: np.ndarray | None = None,
        hashes: np.ndarray | None = None,
    ) -> None:
        super().__init__(blob, offsets)
        self.slots = slots
        self._folded = folded_slots
        self._hashes = hashes

    @classmethod
    def of(cls, tokens: Iterable[str]) -> Vocabulary:
        """The vocabulary of `tokens` in order (duplicates allowed: see duplicate_rows)."""
        if isinstance(tokens, Vocabulary):
            return tokens
        return cls.of_bytes([encode(token) for token in tokens])

    @classmethod
    def of_bytes(cls, encoded: Sequence[bytes]) -> Vocabulary:
        """The vocabulary of tokens given as their UTF-8 bytes."""
        hashes = np.fromiter(map(zlib.crc32, encoded), dtype=np.uint32, count=len(encoded))
        return cls(*cls.pack(encoded), build_slots(hashes), hashes=hashes)

    def __contains__(self, token: object) -> bool:
        return isinstance(token, str) and self.find(token) is not None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedStrings):
            # Two packed forms (checkpoint sets, /drift): equal bytes, no string per row.
            if not np.array_equal(self.offsets, other.offsets):
                return False
            start, end = int(self.offsets[0]), int(self.offsets[-1])
            return bool(self.blob[start:end] == other.blob[start:end])
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Vocabulary({len(self)} tokens)"

    def index(self, value: Any, start: int = 0, stop: int | None = None) -> int:
        """The row of `value` (a token is on one row only): ValueError when absent."""
        row = self.find(value) if isinstance(value, str) else None
        if row is None or row < start or (stop is not None and row >= stop):
            raise ValueError(f"{value!r} is not in the vocabulary")
        return row

    # Lookups.

    def find(self, token: str) -> int | None:
        """The row of `token`, or None."""
        encoded = encode(token)
        slots, offsets, blob = self.slots, self.offsets, self.blob
        for row in self._probe(slots, zlib.crc32(encoded)):
            start, end = offsets[row : row + 2].tolist()
            if end - start == len(encoded) and blob[start:end] == encoded:
                return row
        return None

    def find_folded(self, token: str) -> int | None:
        """The lowest row whose token case-folds to `token`'s case fold, or None."""
        folded = token.casefold()
        key = encode(folded)
        for row in self._probe(self.folded_slots, zlib.crc32(key)):
            if self[row].casefold() == folded:
                return row
        return None

    @property
    def folded_slots(self) -> np.ndarray:
        """The case-folded hash table, built on first use unless it was stored."""
        if self._folded is None:
            self._folded = build_folded_slots(self)
        return self._folded

    def duplicate_rows(self) -> tuple[int, int, int] | None:
        """(how many tokens repeat, the first row of one of them, its next row), or None."""
        hashes = self.hashes()
        order = np.argsort(hashes, kind="stable")
        same = np.flatnonzero(hashes[order][1:] == hashes[order][:-1])
        pairs = [(int(order[i]), int(order[i + 1])) for i in same.tolist()]
        repeated = sorted(pair for pair in pairs if self[pair[0]] == self[pair[1]])
        if not repeated:
            return None
        distinct = {self[first] for first, _ in repeated}
        first, again = min(repeated)
        return len(distinct), first, again

    def hashes(self) -> np.ndarray:
        """CRC-32 of every token's bytes."""
        if self._hashes is not None:
            return self._hashes
        blob, offsets = self.blob, self.offsets.tolist()
        return np.fromiter(
            (zlib.crc32(blob[offsets[i] : offsets[i + 1]]) for i in range(len(self))),
            dtype=np.uint32,
            count=len(self),
        )

    @property
    def nbytes(self) -> int:
        """Bytes held: the token bytes, offsets and hash tables."""
        folded = 0 if self._folded is None else int(self._folded.nbytes)
        return len(self.blob) + int(self.offsets.nbytes + self.slots.nbytes) + folded

    def _probe(self, slots: np.ndarray, crc: int) -> Iterator[int]:
        """The rows in the slots from `crc`'s home slot to the first empty one."""
        size = slots.size
        slot = home_slot(crc, int(size).bit_length() - 1)
        while True:
            row = int(slots[slot])
            if row == EMPTY:
                return
            yield row
            slot = slot + 1 if slot + 1 < size else 0


class TokenIds(Mapping[str, int]):
    """token -> row as a read-only mapping over a Vocabulary (exact or case-folded)."""

    def __init__(self, vocabulary: Vocabulary, folded: bool = False) -> None:
        self.vocabulary = vocabulary
        self.folded = folded

    def __getitem__(self, token: str) -> int:
        row = self._find(token) if isinstance(token, str) else None
        if row is None:
            raise KeyError(token)
        return row

    def __contains__(self, token: object) -> bool:
        return isinstance(token, str) and self._find(token) is not None

    def __iter__(self) -> Iterator[str]:
        if not self.folded:
            return iter(self.vocabulary)
        return iter(dict.fromkeys(token.casefold() for token in self.vocabulary))

    def __len__(self) -> int:
        return len(self.vocabulary) if not self.folded else sum(1 for _ in self)

    def _find(self, token: str) -> int | None:
        vocabulary = self.vocabulary
        return vocabulary.find_folded(token) if self.folded else vocabulary.find(token)


def encode(text: str) -> bytes:
    """UTF-8, lone surrogates kept (a tokenizer's JSON can name them)."""
    return text.encode("utf-8", "surrogatepass")


def home_slot(crc: int, bits: int) -> int:
    """The first slot a hash probes in a table of 2**bits slots."""
    return ((crc * _GOLDEN) & 0xFFFFFFFF) >> (32 - bits) if bits else 0


def slot_bits(count: int) -> int:
    """log2 of the hash table size for `count` tokens."""
    return max(1, int(np.ceil(np.log2(max(2.0, count * SLOTS_PER_TOKEN)))))


def build_slots(hashes: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """The open-addressing table of `rows` (default: all) keyed by their `hashes`."""
    rows = np.arange(hashes.size) if rows is None else rows
    bits = slot_bits(hashes.size)
    size = 1 << bits
    home = ((hashes.astype(np.uint64) * _GOLDEN) & 0xFFFFFFFF) >> np.uint64(32 - bits)
    slots = np.full(size, EMPTY, dtype=np.int32 if hashes.size < 2**31 else np.int64)
    order = np.lexsort((rows, home))
    slots[_place(home[order].astype(np.int64), size)] = rows[order]
    return slots


def _place(home: np.ndarray, size: int) -> np.ndarray:
    """Linear probing's final slots for keys inserted in sorted order of home slot.

    Sorted by home slot, key i lands at max(home_i, slot_{i-1} + 1), which is
    i + running max(home_j - j); the keys past the end wrap round to the free slots at the start
    (there are enough: the load factor is below one).
    """
    ranks = np.arange(home.size)
    placed = np.maximum.accumulate(home - ranks) + ranks
    over = placed >= size
    if over.any():
        free = np.setdiff1d(np.arange(size), placed[~over], assume_unique=True)
        placed[over] = free[: int(over.sum())]
    return placed


def build_folded_slots(vocabulary: Vocabulary) -> np.ndarray:
    """The hash table of case-folded tokens: one entry per fold, the lowest row of its variants."""
    seen: dict[str, None] = {}
    rows, hashes = [], []
    for row, token in enumerate(vocabulary):
        folded = token.casefold()
        if folded not in seen:
            seen[folded] = None
            rows.append(row)
            hashes.append(zlib.crc32(encode(folded)))
    return build_slots(np.asarray(hashes, dtype=np.uint32), np.asarray(rows, dtype=np.int64))
