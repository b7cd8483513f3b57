"""What would find an unknown token, said to whoever asked: a request or a command line.

A 404 UnknownToken carries the first hint found in its envelope as `hint` ({"token", "row",
"by"}), and its message says it in the request's terms; the command line words the same hint
in its own (service/cli/answers.py), since it has no `{"text": ...}` to send.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Literal

from service.engine.errors import EngineError
from service.engine.served import ServedTable

# Unknown tokens looked at for a hint, at most: a hint costs a lookup and maybe a split each.
HINTED = 8


@dataclass(frozen=True)
class Hint:
    """`token` is unknown, but `row` answers it: read as a text by the table's tokenizer (a
    tokenizer that lower-cases reads 'King' as 'king'), or by the case-insensitive fallback."""

    token: str
    row: str
    by: Literal["text", "case_insensitive"]

    def for_request(self) -> str:
        """The hint in an HTTP request's terms."""
        if self.by == "text":
            text = json.dumps({"text": self.token}, ensure_ascii=False)
            return f" (send {text}: the table's tokenizer reads it as one row)"
        return (
            f" ({self.token!r} is {self.row!r} in another case: serve the table with "
            "case_insensitive = true to fall back to it)"
        )

    def for_command_line(self) -> str:
        """The hint in a command line's terms."""
        if self.by == "text":
            return (
                f" (the table's tokenizer reads {self.token!r} as the row {self.row!r}: ask for "
                f"{self.row!r})"
            )
        return (
            f" ({self.token!r} is {self.row!r} in another case: ask for {self.row!r}, or name the "
            "table as --table NAME=PATH,case_insensitive=true to fall back to it)"
        )

    def to_json(self) -> dict[str, Any]:
        """The envelope's `hint`."""
        return asdict(self)

    @classmethod
    def of_json(cls, data: dict[str, Any]) -> Hint:
        """The hint an envelope carries."""
        return cls(token=data["token"], row=data["row"], by=data["by"])


def hint_for(served: ServedTable, tokens: list[str]) -> Hint | None:
    """What would find the first unknown token that something would find: the text form, or
    the table's case fallback; None when nothing would."""
    for token in tokens[:HINTED]:
        row = _one_piece(served, token)
        if row is not None:
            return Hint(token, served.table.tokens[row], "text")
        found = None if served.case_insensitive else served.table.find(token, True)
        if found is not None:
            return Hint(token, served.table.tokens[found], "case_insensitive")
    return None


def _one_piece(served: ServedTable, token: str) -> int | None:
    """The row the table's tokenizer reads `token` as, when it reads it as one."""
    if served.table.tokenizer is None or len(token) > 64:
        return None
    try:
        ids = served.text.split(token).ids
    except EngineError:
        return None
    return int(ids[0]) if len(ids) == 1 else None
