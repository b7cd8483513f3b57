"""word2vec binary and the text formats (word2vec text, fastText `.vec`, GloVe)."""

from __future__ import annotations

import itertools
import mmap
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np

from service.engine.errors import TableLoadError
from service.engine.loaders.files import mapped, open_file, read_error
from service.engine.table import EmbeddingTable

# The word2vec C tool ends a token at a space and separates rows with a newline (gensim does not).
_ROW_GAP = b" \t\r\n"
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


# --- word2vec binary -------------------------------------------------------------------------


def load_word2vec_binary(path: str | Path) -> EmbeddingTable:
    """Load a word2vec binary file: `rows width`, then per row a token, a space, width float32s."""
    path = Path(path)
    with mapped(path) as data:
        rows, width, start = _binary_header(data, path)
        tokens, vectors = _binary_rows(data, start, rows, width, path)
    return EmbeddingTable(tokens, vectors, source=str(path))


def _binary_header(data: mmap.mmap, path: Path) -> tuple[int, int, int]:
    end = data.find(b"\n", 0, 64)
    line = data[: end if end >= 0 else 64].decode("ascii", "replace")
    header = parse_header(line) if end >= 0 else None
    if header is None:
        raise TableLoadError(path, f"bad header: expected 'rows width' on line 1, got {line!r}")
    return header[0], header[1], end + 1


def _binary_rows(
    data: mmap.mmap, pos: int, rows: int, width: int, path: Path
) -> tuple[list[str], np.ndarray]:
    size, row_bytes = len(data), 4 * width
    # A row is at least a 1-byte token, a space and its floats: a garbled header can't make us
    # allocate more than the file could hold.
    vectors = np.empty((min(rows, (size - pos) // (row_bytes + 2)), width), dtype=np.float32)
    tokens: list[str] = []
    while len(tokens) < len(vectors):
        while pos < size and data[pos] in _ROW_GAP:
            pos += 1
        space = data.find(b" ", pos)
        if space < 0 or space + 1 + row_bytes > size:
            break
        tokens.append(_decode_token(data[pos:space], len(tokens), pos, path))
        vectors[len(tokens) - 1] = np.frombuffer(data, "<f4", width, space + 1)
        pos = space + 1 + row_bytes
    if len(tokens) < rows:
        raise TableLoadError(path, f"truncated: header says {rows} rows, found {len(tokens)}")
    return tokens, vectors


def _decode_token(raw: bytes, row: int, offset: int, path: Path) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        where = f"byte offset {offset + error.start}"
        raise TableLoadError(path, f"row {row}: token is not valid UTF-8 ({where})") from None


# --- text: word2vec text, fastText .vec, GloVe ------------------------------------------------


def load_word2vec_text(path: str | Path) -> EmbeddingTable:
    """Load a text table: an optional `rows width` header, then a token and its values per line."""
    return _load_text(Path(path))


def load_glove(path: str | Path) -> EmbeddingTable:
    """Load a GloVe text file (no header; tokens may contain spaces)."""
    return _load_text(Path(path))


def load_fasttext(path: str | Path) -> EmbeddingTable:
    """Load a fastText `.vec` text file (a word2vec text file with a header)."""
    return _load_text(Path(path))


def _load_text(path: Path) -> EmbeddingTable:
    with open_file(path) as handle:
        lines = _text_lines(handle, path)
        first = next(lines, None)
        if first is None:
            raise TableLoadError(path, "no rows: the file holds only blank lines")
        header = parse_header(first[1])
        width = header[1] if header else _glove_width(*first, path)
        body = lines if header else itertools.chain([first], lines)
        tokens, vectors = _text_rows(body, width, path, spaced_tokens=header is None)
    if header and header[0] != len(tokens):
        truncated = "truncated: " if len(tokens) < header[0] else ""
        raise TableLoadError(path, f"{truncated}header says {header[0]} rows, found {len(tokens)}")
    return EmbeddingTable(tokens, vectors, source=str(path))


def _text_lines(handle: BinaryIO, path: Path) -> Iterator[tuple[int, str]]:
    try:
        # Binary iteration splits on b"\n" only: unicode line separators may be inside tokens.
        for number, raw in enumerate(handle, start=1):
            line = _decode_line(raw, number, path).rstrip()
            if line:
                yield number, line
    except OSError as error:
        raise read_error(path, error) from None


def _decode_line(raw: bytes, number: int, path: Path) -> str:
    try:
        return raw.decode("utf-8-sig" if number == 1 else "utf-8")
    except UnicodeDecodeError as error:
        raise TableLoadError(
            path, f"line {number}: invalid UTF-8 at byte {error.start} of the line"
        ) from None


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


def _text_rows(
    lines: Iterator[tuple[int, str]], width: int, path: Path, spaced_tokens: bool
) -> tuple[list[str], np.ndarray]:
    tokens: list[str] = []
    blocks: list[np.ndarray] = []
    block: list[np.ndarray] = []
    for number, line in lines:
        token, values = _split_row(line, width, number, path, spaced_tokens)
        tokens.append(token)
        block.append(values)
        if len(block) == _BLOCK_ROWS:  # stacking in blocks keeps memory near the table's size
            blocks.append(np.stack(block))
            block = []
    if block:
        blocks.append(np.stack(block))
    return tokens, np.concatenate(blocks) if blocks else np.empty((0, width), np.float32)


def _split_row(
    line: str, width: int, number: int, path: Path, spaced_tokens: bool
) -> tuple[str, np.ndarray]:
    # Single spaces keep every character of the token; fall back for tabs or runs of spaces.
    parts = line.rsplit(" ", width)
    if len(parts) != width + 1 or "" in parts:
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
    except ValueError as error:
        raise TableLoadError(path, f"line {number}: {error}") from None
