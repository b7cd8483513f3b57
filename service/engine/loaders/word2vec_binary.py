"""word2vec binary: a `rows width` header line, then per row a token, a space, width float32s."""

from __future__ import annotations

import mmap
from pathlib import Path

import numpy as np

from service.engine.errors import TableLoadError
from service.engine.loaders.files import mapped
from service.engine.loaders.options import DEFAULTS, LoadOptions
from service.engine.loaders.text import parse_header
from service.engine.table import EmbeddingTable

# The word2vec C tool ends a token at a space and separates rows with a newline (gensim does not).
_ROW_GAP = b" \t\r\n"


def load_word2vec_binary(path: str | Path, options: LoadOptions = DEFAULTS) -> EmbeddingTable:
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
        # Never quote the line: the path may point at a file that is not a table at all.
        raise TableLoadError(path, "bad header: expected 'rows width' on line 1")
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
