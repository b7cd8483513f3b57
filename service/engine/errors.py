"""Domain errors raised by the engine; the HTTP layer maps each to one status code."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class EngineError(Exception):
    """Base of every error the engine raises on purpose."""

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    @property
    def type(self) -> str:
        """The error's name as it appears in the error envelope."""
        return type(self).__name__


class UnknownToken(EngineError):
    """One or more tokens are not in the table; every one of them is named."""

    def __init__(
        self,
        tokens: Sequence[str],
        table_name: str = "",
        hint: str = "",
        found: dict[str, Any] | None = None,
    ) -> None:
        names = ", ".join(repr(token) for token in tokens)
        where = f" in table {table_name!r}" if table_name else ""
        # `found`: what would find one of them (operations/hints.py), as the envelope's `hint`.
        details: dict[str, Any] = {"tokens": list(tokens)}
        if found is not None:
            details["hint"] = found
        super().__init__(f"unknown token(s){where}: {names}{hint}", **details)


class UnknownId(EngineError):
    """One or more ids are outside the table's rows."""

    def __init__(self, ids: Sequence[int], rows: int) -> None:
        names = ", ".join(str(i) for i in ids)
        super().__init__(f"id(s) out of range [0, {rows}): {names}", ids=list(ids), rows=rows)


class UnknownCheckpoint(EngineError):
    """A checkpoint index outside a table's checkpoint set (a plain table has one: 0)."""

    def __init__(self, checkpoint: int, count: int, table_name: str) -> None:
        super().__init__(
            f"table {table_name!r} has {count} checkpoint(s), numbered 0 to {count - 1}: "
            f"there is no checkpoint {checkpoint}",
            checkpoint=checkpoint,
            checkpoints=count,
        )


class UnknownTable(EngineError):
    """No table is served under this name."""

    def __init__(self, name: str, available: Sequence[str]) -> None:
        super().__init__(
            f"no table named {name!r}; served tables: {', '.join(available) or 'none'}",
            table=name,
            available=list(available),
        )


class TableNotReady(EngineError):
    """The table is configured but not loaded and indexed yet."""

    def __init__(self, name: str, state: str) -> None:
        super().__init__(f"table {name!r} is not ready ({state})", table=name, state=state)


class DimensionMismatch(EngineError):
    """A vector's length differs from the table's width."""

    def __init__(self, expected: int, got: int) -> None:
        super().__init__(
            f"vector has {got} components, the table's rows have {expected}",
            expected=expected,
            got=got,
        )


class ZeroVector(EngineError):
    """A query has no direction (a zero row such as padding, or terms that cancel out)."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} is a zero vector: it has no direction, so cosine is undefined")


class InvalidQuery(EngineError):
    """A query that is well-formed but cannot be answered as asked."""


class InvalidVector(EngineError):
    """A vector component is NaN, infinite or beyond the accepted magnitude."""

    def __init__(self, index: int, value: float, bound: float) -> None:
        super().__init__(
            f"vector component {index} is {value}: components must be finite numbers within "
            f"+-{bound:g}",
            index=index,
        )


class TableLoadError(EngineError):
    """A table file cannot be loaded; the message names the file and the problem."""

    def __init__(self, path: object, problem: str) -> None:
        super().__init__(f"{path}: {problem}", path=str(path), problem=problem)
        self.path = str(path)
        self.problem = problem


class LimitExceeded(EngineError):
    """A request asks for more than the configured limit allows."""

    def __init__(self, what: str, limit: float, got: float) -> None:
        super().__init__(f"{what} is {got}, above the limit of {limit}", limit=limit, got=got)


class SeveralPieces(EngineError):
    """A text stands for one token, but the table's tokenizer splits it into several pieces."""

    SHOWN = 64  # pieces named in the error, at most: a long text must not make a huge answer

    def __init__(
        self, text: str, pieces: Sequence[str], ids: Sequence[int], table_name: str
    ) -> None:
        shown = " ".join(pieces[: self.SHOWN]) + (" ..." if len(pieces) > self.SHOWN else "")
        quoted = repr(text if len(text) <= 80 else text[:80] + "...")
        super().__init__(
            f"{quoted} is {len(pieces)} pieces in table {table_name!r}: {shown}; it has no row "
            'of its own. Send "pieces": "mean" to use the mean of their rows.',
            count=len(pieces),
            pieces=list(pieces[: self.SHOWN]),
            ids=list(ids[: self.SHOWN]),
        )


class EmptyText(EngineError):
    """A text that the table's tokenizer turns into no pieces at all."""

    def __init__(self, table_name: str) -> None:
        super().__init__(
            f"a text has no pieces in table {table_name!r}: it holds only whitespace or characters "
            "the tokenizer drops"
        )
