"""The text formats: word2vec text and fastText `.vec` (with a `rows width` header), GloVe."""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple

import numpy as np

from service.engine.errors import TableLoadError
from service.engine.files.reading import DECODE_HINT, open_file, read_error
from service.engine.loaders.options import DEFAULTS, LoadOptions
from service.engine.loaders.tokens import check_replaced
from service.engine.tables.table import EmbeddingTable

# A row count or width longer than this is garbage, not a header (and would overflow rsplit).
_HEADER_DIGITS = 12
_BLOCK_ROWS = 4096


def parse_header(line: str) -> tuple[int, int] | None:
    """The `(rows, width)` of a word2vec header line, or None if `line` is not one."""
    fields = line.split()
    if len(fields) != 2 or not all(_is_count(field) for field in fields):
        return None
    return int(fields[0]), int(fields[1])


def _is_count(field: str) -> bool:
    return field.isascii() and field.isdigit() and len(field) <= _HEADER_DIGITS


def load_text(path: str | Path, options: LoadOptions = DEFAULTS) -> EmbeddingTable:
    """Load a text table: an optional `rows width` header, then a token and its values per line.

    With the header it is word2vec text or fastText `.vec`; without, GloVe, whose tokens may
    contain spaces. The header is sniffed, so every text format is read by this one function.
    """
    path = Path(path)
    changed: list[int] = []  # numbers of the lines unicode_errors changed
    with open_file(path) as handle:
        lines = _text_lines(handle, path, options.unicode_errors, changed)
        first = next(lines, None)
        if first is None:
            raise TableLoadError(path, "no rows: the file holds only blank lines")
        header = parse_header(first[1])
        width = header[1] if header else _glove_width(*first, path)
        body = lines if header else itertools.chain([first], lines)
        rows = _text_rows(
            itertools.islice(body, options.limit), width, path, spaced_tokens=header is None
        )
    if header:
        _check_row_count(path, header[0], min(header[0], options.limit or header[0]), rows.tokens)
    if changed:
        changed_lines = set(changed)
        changed_rows = [row for row, line in enumerate(rows.numbers) if line in changed_lines]
        where = rows.numbers
        errors = options.unicode_errors
        check_replaced(rows.tokens, changed_rows, errors, path, lambda row: f"line {where[row]}")
    return EmbeddingTable(rows.tokens, rows.vectors, source=str(path), layout=options.layout)


def _check_row_count(path: Path, promised: int, wanted: int, tokens: list[str]) -> None:
    if len(tokens) != wanted:
        truncated = "truncated: " if len(tokens) < wanted else ""
        raise TableLoadError(path, f"{truncated}header says {promised} rows, found {len(tokens)}")


def _text_lines(
    handle: BinaryIO, path: Path, errors: str, changed: list[int]
) -> Iterator[tuple[int, str]]:
    try:
        # Binary iteration splits on b"\n" only: unicode line separators may be inside tokens.
        for number, raw in enumerate(handle, start=1):
            line = _decode_line(raw, number, path, errors, changed).rstrip()
            if line:
                yield number, line
    except OSError as error:
        raise read_error(path, error) from None


def _decode_line(raw: bytes, number: int, path: Path, errors: str, changed: list[int]) -> str:
    encoding = "utf-8-sig" if number == 1 else "utf-8"
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as error:
        if errors == "strict":
            where = f"line {number}: invalid UTF-8 at byte {error.start} of the line"
            raise TableLoadError(path, f"{where}; {DECODE_HINT}") from None
    changed.append(number)
    return raw.decode(encoding, errors)


def _glove_width(number: int, line: str, path: Path) -> int:
    # Count numbers from the right: a GloVe 840B token may itself contain spaces.
    fields = line.split()
    numbers = sum(1 for _ in itertools.takewhile(_is_number, reversed(fields[1:])))
    if numbers == 0:
        raise TableLoadError(path, f"line {number}: expected a token followed by numbers")
    return numbers


def _is_number(field: str) -> bool:
    try:
        float(field)
    except ValueError:
        return False
    return True


class _TextRows(NamedTuple):
    tokens: list[str]
    vectors: np.ndarray
    numbers: array[int]  # the line each row came from


def _text_rows(
    lines: Iterator[tuple[int, str]], width: int, path: Path, spaced_tokens: bool
) -> _TextRows:
    tokens: list[str] = []
    numbers = array("q")
    blocks: list[np.ndarray] = []
    block: list[np.ndarray] = []
    for number, line in lines:
        token, values = _split_row(line, width, number, path, spaced_tokens)
        tokens.append(token)
        numbers.append(number)
        block.append(values)
        if len(block) == _BLOCK_ROWS:  # stacking in blocks keeps memory near the table's size
            blocks.append(np.stack(block))
            block = []
    if block:
        blocks.append(np.stack(block))
    vectors = np.concatenate(blocks) if blocks else np.empty((0, width), np.float32)
    return _TextRows(tokens, vectors, numbers)


def _split_row(
    line: str, width: int, number: int, path: Path, spaced_tokens: bool
) -> tuple[str, np.ndarray]:
    # Single spaces keep every character of the token; fall back for tabs or runs of spaces.
    parts = line.rsplit(" ", width)
    # An empty token is gensim's reading of a line that starts with a space (as a token of
    # invalid UTF-8 becomes with unicode_errors="ignore"); empty values are runs of spaces.
    if len(parts) != width + 1 or "" in parts[1:]:
        parts = line.rsplit(None, width)
    token = parts[0].rstrip(" \t")
    # Only GloVe tokens contain spaces; word2vec and fastText split tokens on whitespace, so a
    # space left in their token means the line has too many values.
    if len(parts) != width + 1 or (not spaced_tokens and (" " in token or "\t" in token)):
        found = len(line.split()) - 1
        raise TableLoadError(
            path, f"line {number}: expected a token and {width} values, found {found}"
        )
    try:
        # A value beyond float32's range (1e39) becomes inf, which EmbeddingTable rejects with
        # the row number; numpy's overflow warning would only be noise before that error.
        with np.errstate(over="ignore"):
            return token, np.array(parts[1:], dtype=np.float32)
    except ValueError:
        # numpy's message quotes the value; the position is enough to find it.
        bad = next((i for i, part in enumerate(parts[1:], 1) if not _is_number(part)), "")
        raise TableLoadError(path, f"line {number}: value {bad} is not a number") from None
