"""Token decoding shared by the loaders: duplicates that unicode_errors creates."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from service.engine.errors import TableLoadError


def check_replaced(
    tokens: Sequence[str],
    changed: Sequence[int],
    errors: str,
    path: Path,
    place: Callable[[int], str],
) -> None:
    """Raise TableLoadError if a token that `errors` changed now equals another token.

    `changed` are the rows whose bytes were not valid UTF-8; `place(row)` names a row for the
    message (a row or line number: never the token, which is the file's content).
    """
    if not changed:
        return
    altered = set(changed)
    first: dict[str, int] = {}
    for row, token in enumerate(tokens):
        earlier = first.setdefault(token, row)
        if earlier != row and (earlier in altered or row in altered):
            raise TableLoadError(
                path,
                f"{place(earlier)} and {place(row)} hold the same token once "
                f"unicode_errors={errors!r} has changed its invalid UTF-8",
            )
