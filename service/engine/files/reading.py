"""File helpers shared by the loaders: safe opening, decoding, and vocabulary checks."""

from __future__ import annotations

import bz2
import io
import json
import mmap
import os
import stat
import zlib
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from pathlib import Path
from typing import Any, BinaryIO

from service.engine.errors import TableLoadError

# Suffix -> how to decompress while reading; the suffix before it names the format.
# How to load a file whose tokens are not valid UTF-8 (the loaders' unicode_errors option).
DECODE_HINT = "unicode_errors='replace' or 'ignore' loads it"
COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2"}
# The folder every file a load opens must resolve inside, when the load is confined.
_ROOT: ContextVar[Path | None] = ContextVar("loader_root", default=None)


@contextmanager
def confined(root: Path | None) -> Iterator[None]:
    """Within the block, every file a loader opens must resolve (symlinks followed) inside
    `root`, or the load fails with TableLoadError; None confines nothing.

    Every loader checks a file with require_file (or check_confined) before it opens it, so
    this covers the files found inside a model directory (vocabulary, tokenizer, shards) and
    those a prepared folder's manifest names (tables/stored.py) as well as the named ones.
    """
    token = _ROOT.set(None if root is None else root.resolve())
    try:
        yield
    finally:
        _ROOT.reset(token)


def check_confined(path: Path) -> None:
    """TableLoadError unless `path` resolves (symlinks followed) inside the confining folder,
    when there is one; before anything is read of it, so the error says nothing of the file."""
    root = _ROOT.get()
    if root is not None and not path.resolve().is_relative_to(root):
        raise TableLoadError(path, f"resolves outside the allowed tables directory {root}")


def require_file(path: Path) -> int:
    """Size of `path`; raises TableLoadError unless it is a non-empty regular file (inside the
    confining folder, when there is one)."""
    check_confined(path)
    try:
        status = path.stat()
    except FileNotFoundError:
        raise TableLoadError(path, "no such file") from None
    except OSError as error:
        raise read_error(path, error) from None
    if stat.S_ISDIR(status.st_mode):
        raise TableLoadError(path, "is a directory, not a file")
    if not stat.S_ISREG(status.st_mode):  # a FIFO or device could block reads forever
        raise TableLoadError(path, "not a regular file")
    if status.st_size == 0:
        raise TableLoadError(path, "file is empty")
    if not os.access(path, os.R_OK):
        raise unreadable(path)
    return status.st_size


def unreadable(path: Path) -> TableLoadError:
    """The TableLoadError for a path this process may not read, saying who it runs as."""
    return TableLoadError(
        path,
        f"cannot read: permission denied to uid {os.geteuid()}, the user this process runs as; "
        "make the files readable by it (chmod -R a+rX on the folder)",
    )


@contextmanager
def permission_errors(path: Path) -> Iterator[None]:
    """Within the block, a PermissionError becomes unreadable(): one line naming the path."""
    try:
        yield
    except PermissionError as error:
        raise unreadable(Path(error.filename) if error.filename else path) from None


def compression(path: Path) -> str | None:
    """The compression of `path` from its suffix (`gzip`, `bz2`), or None."""
    return COMPRESSIONS.get(path.suffix.lower())


def format_suffix(path: Path) -> str:
    """The suffix that names the format: `.bin` for both `a.bin` and `a.bin.gz`."""
    return Path(path.stem).suffix.lower() if compression(path) else path.suffix.lower()


@contextmanager
def open_file(path: Path) -> Iterator[BinaryIO]:
    """Open a checked regular file for binary reading, decompressing `.gz` and `.bz2`.

    OS errors and corrupt or truncated compressed data become TableLoadError.
    """
    require_file(path)
    try:
        handle = path.open("rb")
    except OSError as error:
        raise read_error(path, error) from None
    kind = compression(path)
    with handle:
        if kind is None:
            yield handle
            return
        opened = gzip_stream(handle) if kind == "gzip" else bz2.BZ2File(handle)
        with opened as stream, _decompression_errors(path, kind):
            yield stream  # type: ignore[misc]


# Compressed bytes read, and decompressed bytes made, per step of a gzip stream.
_GZIP_READ = 1 << 20
_GZIP_STEP = 1 << 22


class _GzipMembers(io.RawIOBase):
    """gzip data (one member or several, zero padding between them, as gzip.GzipFile reads
    it) inflated by zlib in 1 MiB reads, checked against each member's CRC-32 and length.

    Python 3.11's GzipFile returns about 8 KiB per call whatever is asked: a 3.4 GB file took
    412,926 calls and about 9 s of Python around 17 s of inflating. Each step here makes at
    most 4 MiB, so a small file that inflates to gigabytes is read as slowly as it is used.
    Truncated data raises EOFError, data that is not gzip zlib.error (open_file reports both).
    """

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.inflate = zlib.decompressobj(31)  # 31: a gzip header and trailer, both checked
        self.compressed = b""  # read, not yet inflated
        self.ready = memoryview(b"")  # inflated, not yet returned
        self.in_member = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self.ready:
            if not self._step():
                return 0
        size = min(len(buffer), len(self.ready))
        buffer[:size] = self.ready[:size]
        self.ready = self.ready[size:]
        return size

    def _step(self) -> bool:
        """Inflate some more; False at the end of the data."""
        if not self.compressed:
            self.compressed = self.raw.read(_GZIP_READ)
            if not self.compressed:
                if self.in_member:
                    raise EOFError("compressed data ends before the end of a member")
                return False
        if not self.in_member:
            self.compressed = self.compressed.lstrip(b"\x00")  # padding between members
            if not self.compressed:
                return True
            self.in_member = True
        self.ready = memoryview(self.inflate.decompress(self.compressed, _GZIP_STEP))
        self.compressed = self.inflate.unconsumed_tail
        if self.inflate.eof:
            self.compressed = self.inflate.unused_data
            self.inflate = zlib.decompressobj(31)
            self.in_member = False
        return True


def gzip_stream(raw: BinaryIO) -> io.BufferedReader:
    """A buffered binary stream of the gzip data read from `raw` (see _GzipMembers)."""
    return io.BufferedReader(_GzipMembers(raw), buffer_size=_GZIP_READ)


@contextmanager
def _decompression_errors(path: Path, kind: str) -> Iterator[None]:
    try:
        yield
    except EOFError:
        raise TableLoadError(path, f"truncated: the {kind} data ends before its end") from None
    except OSError as error:
        if error.errno is not None:
            raise read_error(path, error) from None
        # gzip and bz2 say "Not a gzipped file (b'..')" or "Invalid data stream": never quoted.
        raise TableLoadError(path, f"corrupt {kind} data: cannot decompress it") from None
    except zlib.error:
        raise TableLoadError(path, f"corrupt {kind} data: cannot decompress it") from None


@contextmanager
def mapped(path: Path) -> Iterator[mmap.mmap]:
    """Map a checked, uncompressed regular file read-only into memory."""
    # Mapping instead of reading keeps multi-gigabyte word2vec files out of process memory.
    with open_file(path) as handle:
        try:
            data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as error:
            raise read_error(path, error) from None
        try:
            yield data
        finally:
            _close(data)


def _close(data: mmap.mmap) -> None:
    # An error raised while parsing can still hold views of the map in its traceback; the map
    # is unmapped when they go, and the error, not a BufferError, is what the caller must see.
    with suppress(BufferError):
        data.close()


def read_error(path: Path, error: Exception) -> TableLoadError:
    """The TableLoadError reporting that `path` could not be read (the OS's reason only)."""
    # Only the OS's reason: other errors' messages can quote the file (gzip quotes its magic).
    return TableLoadError(path, f"cannot read: {getattr(error, 'strerror', None) or 'I/O error'}")


def read_text(path: Path, errors: str = "strict") -> str:
    """The whole of a checked file as text (UTF-8, a BOM dropped)."""
    with open_file(path) as handle:
        try:
            data = handle.read()
        except OSError as error:
            raise read_error(path, error) from None
    try:
        return data.decode("utf-8-sig", errors)
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise TableLoadError(
            path, f"line {line}: invalid UTF-8 at byte {error.start}; {DECODE_HINT}"
        ) from None


def read_lines(path: Path, errors: str = "strict") -> list[str]:
    """One entry per line, split on "\\n" only: unicode line separators can be tokens."""
    lines = [line.removesuffix("\r") for line in read_text(path, errors).split("\n")]
    if lines[-1] == "" and len(lines) > 1:
        lines.pop()
    return lines


def read_json(path: Path) -> dict[str, Any]:
    """The JSON object stored in `path`."""
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as error:
        # The position only: the decoder's own message can quote the offending characters.
        where = f"line {error.lineno} column {error.colno}"
        raise TableLoadError(path, f"invalid JSON at {where}") from None
    except RecursionError:
        raise TableLoadError(path, "invalid JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise TableLoadError(path, f"expected a JSON object, got {type(data).__name__}")
    return data


def first_line(path: Path) -> str:
    """The start of the first line of `path`, for sniffing its format."""
    with open_file(path) as handle:
        try:
            return handle.readline(4096).decode("utf-8", "replace")
        except OSError as error:
            raise read_error(path, error) from None


def first_existing(path: Path, candidates: list[Path], what: str) -> Path:
    """The first of `candidates` that exists; `what` names the missing file in the error."""
    for candidate in candidates:
        if candidate.exists():
            return candidate
    looked = ", ".join(candidate.name for candidate in candidates)
    raise TableLoadError(path, f"no {what} file found next to it (looked for {looked})")


def check_vocabulary(vocab: Path, tokens: int, rows: int, table: Path) -> None:
    """Raise TableLoadError unless the vocabulary has one token per table row."""
    if tokens != rows:
        raise TableLoadError(
            vocab, f"vocabulary has {tokens} tokens but {table.name} has {rows} rows"
        )
