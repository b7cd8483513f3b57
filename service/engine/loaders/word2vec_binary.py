"""word2vec binary: a `rows width` header line, then per row a token, a space, width float32s.

Rows are found without a Python loop per row: a regular expression splits a window of the
file at "a space followed by the row's float bytes", which is exactly how gensim walks the
rows (the first space after a row's start ends its token), so the pieces are the tokens. Their
lengths give every row's offset, and one numpy gather copies the float blocks into the table.
The word2vec C tool writes a newline after every row and gensim does not; as in gensim, the
newlines that begin a token are dropped. Plain files are memory-mapped, `.gz` and `.bz2` are
decompressed window by window; either way memory is the table plus one window.
"""

from __future__ import annotations

import io
import mmap
import re
from pathlib import Path
from typing import cast

import numpy as np

from service.engine.errors import TableLoadError
from service.engine.files.reading import DECODE_HINT, compression, mapped, open_file
from service.engine.loaders.options import DEFAULTS, LoadOptions
from service.engine.loaders.text import parse_header
from service.engine.loaders.tokens import check_replaced
from service.engine.tables.layout import blank
from service.engine.tables.table import EmbeddingTable
from service.engine.tables.vocabulary import Vocabulary, encode

WINDOW_BYTES = 1 << 25
# The header line is short; a wider row than this is a garbled header, not a table.
_HEADER_BYTES = 64
_MAX_WIDTH = 1 << 20
_GATHER_ROWS = 2048
_TOKEN_NEWLINES = re.compile(b" \n+")


def load_word2vec_binary(path: str | Path, options: LoadOptions = DEFAULTS) -> EmbeddingTable:
    """Load a word2vec binary file, plain or compressed (`.gz`, `.bz2`)."""
    path = Path(path)
    if compression(path) is None:
        with mapped(path) as data:
            rows = _mapped_rows(data, path, options)
    else:
        with open_file(path) as stream:
            rows = _streamed_rows(cast(io.BufferedIOBase, stream), path, options)
    return rows.table()


def _mapped_rows(data: mmap.mmap, path: Path, options: LoadOptions) -> _Rows:
    first = data[:_HEADER_BYTES]
    end = first.find(b"\n")
    rows = _Rows(path, options, first[: end + 1] if end >= 0 else first, len(data), first)
    view = memoryview(data)
    window = WINDOW_BYTES
    while not rows.done and rows.offset < len(data):
        stop = min(len(data), rows.offset + window)
        if rows.parse(view[rows.offset : stop]) == 0:
            if stop == len(data):
                break
            window *= 2  # a row longer than the window: rare, but never a reason to fail
    return rows


def _streamed_rows(stream: io.BufferedIOBase, path: Path, options: LoadOptions) -> _Rows:
    start = bytes(cast(io.BufferedReader, stream).peek(_HEADER_BYTES)[:_HEADER_BYTES])
    rows = _Rows(path, options, stream.readline(_HEADER_BYTES), None, start)
    # One buffer, refilled in place: a fresh 32 MiB per window costs its page faults every time.
    buffer = bytearray(WINDOW_BYTES)
    filled = 0
    while not rows.done:
        if filled == len(buffer):
            buffer.extend(bytes(len(buffer)))  # a row longer than the window: rare, but allowed
        with memoryview(buffer) as view:
            read = stream.readinto(view[filled:])
        if not read:
            break
        filled += read
        with memoryview(buffer) as view:
            used = rows.parse(view[:filled])
        buffer[: filled - used] = buffer[used:filled]  # the start of the next row
        filled -= used
    return rows


class _Rows:
    """The table being read: the header's promise, then the rows parsed window by window."""

    def __init__(
        self, path: Path, options: LoadOptions, header: bytes, size: int | None, start: bytes
    ):
        self.path = path
        self.errors = options.unicode_errors
        self.layout = options.layout
        self.promised, self.width = _parse_header(header, start, path)
        self.wanted = min(self.promised, options.limit or self.promised)
        self.row_bytes = 4 * self.width
        self.offset = len(header)
        # Each token's UTF-8 bytes: the Vocabulary is built from them, with no str per row.
        self.tokens: list[bytes] = []
        self.changed: list[int] = []
        self.vectors = self._allocate(size)
        self._split = re.compile(b" .{%d}" % self.row_bytes, re.DOTALL).split

    @property
    def done(self) -> bool:
        """Whether every wanted row has been read."""
        return len(self.tokens) >= self.wanted

    def _allocate(self, size: int | None) -> np.ndarray:
        rows = self.wanted
        if size is not None:
            # A garbled header can't make us allocate more rows than the file could hold.
            rows = min(rows, (size - self.offset) // (self.row_bytes + 1))
        try:
            # A mapped file bounds the rows, so its table is populated at once; a stream's
            # header could promise more than ever arrives, so its pages come as rows do.
            return blank(rows, self.width, self.layout, populate=size is not None)
        except (MemoryError, OSError, OverflowError, ValueError):
            raise TableLoadError(
                self.path, f"header says {self.promised} rows of {self.width}: too large"
            ) from None

    def parse(self, window: memoryview) -> int:
        """Read every complete row at the start of `window`; the number of bytes used."""
        room = min(self.wanted, len(self.vectors)) - len(self.tokens)
        pieces = self._split(window, room) if room > 0 else [b""]
        pieces.pop()  # what follows the last complete row
        if not pieces:
            return 0
        lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
        ends = np.cumsum(lengths + (1 + self.row_bytes))
        self._copy_vectors(window, ends - self.row_bytes)
        self._add_tokens(pieces, ends - self.row_bytes - 1 - lengths)
        used = int(ends[-1])
        self.offset += used
        return used

    def _copy_vectors(self, window: memoryview, starts: np.ndarray) -> None:
        # Each row's float block, as one opaque item of row_bytes at any byte offset: one
        # fancy-indexing gather copies them all, whatever the tokens' lengths.
        blocks = np.ndarray(
            (len(window) - self.row_bytes + 1,),
            dtype=np.dtype((np.void, self.row_bytes)),
            buffer=window,
            strides=(1,),
        )
        first = len(self.tokens)
        # In batches, so the gather's temporary stays small enough for malloc to reuse: a
        # fresh temporary per window costs page faults as large as the table itself. Each
        # batch of rows is then written into the table's layout (tables/layout.py).
        for batch in range(0, len(starts), _GATHER_ROWS):
            chosen = starts[batch : batch + _GATHER_ROWS]
            rows = blocks[chosen].view("<f4").reshape(len(chosen), self.width)
            self.vectors[first + batch : first + batch + len(chosen)] = rows

    def _add_tokens(self, pieces: list[bytes], starts: np.ndarray) -> None:
        joined = b" ".join(pieces)  # a token never holds a space: the join splits back exactly
        try:
            joined.decode("utf-8")  # only checked: the tokens stay bytes
        except UnicodeDecodeError as error:
            if self.errors == "strict":
                raise self._undecodable(pieces, starts, error.start) from None
            self._add_one_by_one(pieces)
            return
        if b"\n" in joined:  # the C tool's row separators, dropped as gensim drops them
            joined = _drop_leading_newlines(joined)
        self.tokens.extend(joined.split(b" "))

    def _add_one_by_one(self, pieces: list[bytes]) -> None:
        # gensim decodes each token with unicode_errors and then strips its leading newlines.
        for piece in pieces:
            try:
                token = piece.decode("utf-8")
            except UnicodeDecodeError:
                token = piece.decode("utf-8", self.errors)
                self.changed.append(len(self.tokens))
            self.tokens.append(encode(token.lstrip("\n")))

    def _undecodable(self, pieces: list[bytes], starts: np.ndarray, at: int) -> TableLoadError:
        joined_starts = np.cumsum([0] + [len(piece) + 1 for piece in pieces[:-1]])
        index = int(np.searchsorted(joined_starts, at, side="right")) - 1
        offset = self.offset + int(starts[index]) + at - int(joined_starts[index])
        row = len(self.tokens) + index
        return TableLoadError(
            self.path, f"row {row}: token is not valid UTF-8 (byte offset {offset}); {DECODE_HINT}"
        )

    def table(self) -> EmbeddingTable:
        """The rows read as a validated table; TableLoadError if the file held fewer."""
        if len(self.tokens) < self.wanted:
            raise TableLoadError(
                self.path, f"truncated: header says {self.promised} rows, found {len(self.tokens)}"
            )
        vocabulary = Vocabulary.of_bytes(self.tokens)
        check_replaced(vocabulary, self.changed, self.errors, self.path, lambda row: f"row {row}")
        return EmbeddingTable(vocabulary, self.vectors, source=str(self.path), layout=self.layout)


def _old_fasttext(start: bytes) -> bool:
    """Whether `start` is the header of a fastText binary from before its magic number: dim,
    ws, epoch, min_count, neg, word_ngrams, loss, model, bucket, minn, maxn, lr_update_rate
    as int32, then t as a float64 (what gensim's _fasttext_bin reads when the magic is not
    there). A word2vec header is ASCII digits, never these small numbers."""
    if len(start) < 56:
        return False
    dim, ws, epoch, _, neg, ngrams, loss, model, bucket, minn, maxn, rate = np.frombuffer(
        start[:48], dtype="<i4"
    ).tolist()
    [sampling] = np.frombuffer(start[48:56], dtype="<f8").tolist()
    return (
        0 < dim <= _MAX_WIDTH and min(ws, epoch, ngrams, rate) >= 1 and min(neg, bucket) >= 0
        and loss in (1, 2, 3, 4) and model in (1, 2, 3) and 0 <= minn <= maxn <= 1000
        and 0 < sampling < 1
    )  # fmt: skip


def _drop_leading_newlines(joined: bytes) -> bytes:
    # One newline per row is the C tool's layout: bytes.replace is several times faster than
    # the regular expression, which only the rare run of newlines needs. ("\n" is one byte in
    # UTF-8 and never part of another character, so this is gensim's str.lstrip("\n").)
    spaced = (b" " + joined).replace(b" \n", b" ")
    return (_TOKEN_NEWLINES.sub(b" ", spaced) if b" \n" in spaced else spaced)[1:]


# A fastText model binary (.bin from fasttext's save_model) starts with this int32.
FASTTEXT_MAGIC = (793712314).to_bytes(4, "little")
# What to do with one: the word vectors are in the .vec beside it, or gensim writes them.
FASTTEXT_HINT = (
    "serve the .vec file published beside it (format fasttext), which holds the same word "
    "vectors, or write one with gensim: load_facebook_vectors(PATH).save_word2vec_format("
    "'OUT.vec')"
)


def _parse_header(line: bytes, start: bytes, path: Path) -> tuple[int, int]:
    """The `rows width` of `line`, the file's first line; `start` is its first bytes."""
    if start.startswith(FASTTEXT_MAGIC):
        raise TableLoadError(path, f"is a fastText model binary, not word2vec: {FASTTEXT_HINT}")
    header = parse_header(line.decode("ascii", "replace")) if line.endswith(b"\n") else None
    if header is None and _old_fasttext(start):
        raise TableLoadError(
            path,
            "is a fastText model binary in the old format (from before fastText's files began "
            f"with a magic number), not word2vec: {FASTTEXT_HINT}",
        )
    if header is None:
        # Never quote the line: the path may point at a file that is not a table at all.
        raise TableLoadError(path, "bad header: expected 'rows width' on line 1")
    rows, width = header
    if rows == 0 or not 0 < width <= _MAX_WIDTH:
        raise TableLoadError(path, f"bad header: rows must be >= 1, width 1 to {_MAX_WIDTH}")
    return rows, width
