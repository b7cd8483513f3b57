"""Token counts from a file (word2vec's vocabulary file), attached as the `count` column."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from service.engine.errors import TableLoadError
from service.engine.files.reading import read_lines, require_file
from service.engine.tables.table import EmbeddingTable

COUNT_COLUMN = "count"


def read_counts(path: Path) -> dict[str, int]:
    """token -> count from `token count` lines, split at the last space or tab."""
    require_file(path)
    counts: dict[str, int] = {}
    for number, line in enumerate(read_lines(path, "strict"), start=1):
        if not line.strip():
            continue
        token, count = _split(line)
        if token is None or count is None or count < 0:
            raise TableLoadError(path, f"line {number}: expected 'token count' with a count >= 0")
        counts.setdefault(token, count)
    return counts


def _split(line: str) -> tuple[str | None, int | None]:
    cut = max(line.rfind(" "), line.rfind("\t"))
    if cut <= 0:
        return None, None
    try:
        return line[:cut], int(line[cut + 1 :])
    except ValueError:
        return None, None


def with_counts(table: EmbeddingTable, path: Path) -> EmbeddingTable:
    """`table` with a `count` metadata column from `path` (0 for the rows it does not name)."""
    counts = read_counts(path)
    column = [counts.get(token, 0) for token in table.tokens]
    # replace keeps what else the table carries (its tokenizer, its checkpoints).
    return replace(table, metadata={**table.metadata, COUNT_COLUMN: column})
