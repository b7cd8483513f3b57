"""What several answers share: the names a query matched, a row's readable text, and an
answer read as its list."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeVar, overload

Item = TypeVar("Item")

# A query's name -> what it matched: a token found only through the table's case fallback ->
# the stored token; a text -> the one token it is (when not the text itself), or its pieces.
MatchedNames = dict[str, str | list[str]]
# A row's metadata columns (None where a row has no value).
Metadata = dict[str, int | float | str | None]


@dataclass(frozen=True, kw_only=True)
class Matched:
    """An answer's `matched` names (every chunk's, for an answer sent in chunks)."""

    matched: MatchedNames = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Readable:
    """A row whose token a language model writes unreadably (byte-level or SentencePiece):
    `text` is what it stands for ("Ġrunning" is " running"), and `incomplete` says it is
    only part of a character's UTF-8 bytes. None for other tables."""

    text: str | None = None
    incomplete: bool | None = None


class Listed(Sequence[Item]):
    """An answer that reads as the list it holds: indexing, len() and iteration go to it."""

    @property
    def listed(self) -> list[Item]:
        """The list the answer holds."""
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> Item: ...
    @overload
    def __getitem__(self, index: slice) -> list[Item]: ...
    def __getitem__(self, index: int | slice) -> Item | list[Item]:
        return self.listed[index]

    def __len__(self) -> int:
        return len(self.listed)

    def __iter__(self) -> Iterator[Item]:
        return iter(self.listed)
