"""One loader per embedding file format; each returns a validated EmbeddingTable."""

from __future__ import annotations

import itertools
import json
import mmap
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from safetensors import SafetensorError, safe_open

from service.engine.errors import TableLoadError
from service.engine.table import EmbeddingTable, MetadataValue

FORMATS = (
    "word2vec-binary",
    "word2vec-text",
    "glove",
    "fasttext",
    "projector",
    "npy",
    "huggingface",
)
DEFAULT_TENSOR = "embeddings.word_embeddings.weight"

_SUFFIX_FORMATS = {
    ".bin": "word2vec-binary",
    ".vec": "fasttext",
    ".bytes": "projector",
    ".npy": "npy",
    ".safetensors": "huggingface",
}
# The word2vec C tool ends a token at a space and separates rows with a newline (gensim does not).
_ROW_GAP = b" \t\r\n"
# A row count or width longer than this is garbage, not a header (and would overflow rsplit).
_HEADER_DIGITS = 12
_BLOCK_ROWS = 4096


def detect_format(path: Path) -> str:
    """The format of `path` from its extension (sniffing `.txt`); a directory is huggingface."""
    path = Path(path)
    suffix = path.suffix.lower()
    if path.is_dir():
        return "huggingface"
    if suffix in _SUFFIX_FORMATS:
        return _SUFFIX_FORMATS[suffix]
    if suffix == ".txt":
        return "word2vec-text" if _parse_header(_first_line(path)) else "glove"
    if not path.exists():
        raise TableLoadError(path, "no such file or directory")
    known = ", ".join(sorted([*_SUFFIX_FORMATS, ".txt"]))
    raise TableLoadError(
        path,
        f"unknown format: extension {suffix or '(none)'!r} is not one of {known}; "
        f"pass format= one of {', '.join(FORMATS)}",
    )


def load_table(
    path: str | Path,
    format: str | None = None,
    *,
    vocab: str | Path | None = None,
    labels: str | Path | None = None,
    tensor: str | None = None,
    width: int | None = None,
) -> EmbeddingTable:
    """Load one table file in any supported format (auto-detected when format is None)."""
    path = Path(path)
    format = format or detect_format(path)
    if format == "projector":
        return load_projector(path, labels, width)
    if format == "npy":
        return load_npy(path, vocab)
    if format == "huggingface":
        return load_huggingface(path, tensor or DEFAULT_TENSOR, vocab)
    if format == "word2vec-binary":
        return load_word2vec_binary(path)
    if format in FORMATS:
        return _load_text(path)
    raise TableLoadError(path, f"unknown format {format!r}; known formats: {', '.join(FORMATS)}")


# --- word2vec binary -------------------------------------------------------------------------


def load_word2vec_binary(path: str | Path) -> EmbeddingTable:
    """Load a word2vec binary file: `rows width`, then per row a token, a space, width float32s."""
    path = Path(path)
    with _mapped(path) as data:
        rows, width, start = _binary_header(data, path)
        tokens, vectors = _binary_rows(data, start, rows, width, path)
    return EmbeddingTable(tokens, vectors, source=str(path))


def _binary_header(data: mmap.mmap, path: Path) -> tuple[int, int, int]:
    end = data.find(b"\n", 0, 64)
    line = data[: end if end >= 0 else 64].decode("ascii", "replace")
    header = _parse_header(line) if end >= 0 else None
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
    with _open(path) as handle:
        lines = _text_lines(handle, path)
        first = next(lines, None)
        if first is None:
            raise TableLoadError(path, "no rows: the file holds only blank lines")
        header = _parse_header(first[1])
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
        raise _read_error(path, error) from None


def _decode_line(raw: bytes, number: int, path: Path) -> str:
    try:
        return raw.decode("utf-8-sig" if number == 1 else "utf-8")
    except UnicodeDecodeError as error:
        raise TableLoadError(
            path, f"line {number}: invalid UTF-8 at byte {error.start} of the line"
        ) from None


def _parse_header(line: str) -> tuple[int, int] | None:
    fields = line.split()
    if len(fields) != 2 or not all(_is_count(field) for field in fields):
        return None
    return int(fields[0]), int(fields[1])


def _is_count(field: str) -> bool:
    return field.isascii() and field.isdigit() and len(field) <= _HEADER_DIGITS


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
        return token, np.array(parts[1:], dtype=np.float32)
    except ValueError as error:
        raise TableLoadError(path, f"line {number}: {error}") from None


# --- TensorFlow Embedding Projector -----------------------------------------------------------


def load_projector(
    tensor_path: str | Path, labels_path: str | Path | None = None, width: int | None = None
) -> EmbeddingTable:
    """Load an Embedding Projector table: raw float32 `.bytes` plus a labels `.tsv`."""
    tensor_path = Path(tensor_path)
    size = _require_file(tensor_path)
    labels = Path(labels_path) if labels_path else tensor_path.with_suffix(".tsv")
    tokens, metadata = _read_labels(labels)
    width = _projector_width(tensor_path, size, len(tokens), width)
    vectors = _read_float32(tensor_path).reshape(-1, width)
    _check_vocabulary(labels, len(tokens), len(vectors), tensor_path)
    return EmbeddingTable(tokens, vectors, metadata, source=str(tensor_path))


def _projector_width(path: Path, size: int, rows: int, width: int | None) -> int:
    if width is not None and (width <= 0 or size % (4 * width)):
        raise TableLoadError(path, f"{size} bytes do not divide into rows of {width} float32s")
    if width is None and size % (4 * rows):
        raise TableLoadError(
            path, f"{size} bytes do not divide into {rows} rows of float32s (one per label)"
        )
    return width or size // (4 * rows)


def _read_labels(path: Path) -> tuple[list[str], dict[str, list[MetadataValue]]]:
    lines = _read_lines(path)
    # The projector's convention: only a file with several columns has a header row.
    if "\t" not in lines[0]:
        return lines, {}
    header = lines[0].split("\t")
    if len(set(header)) != len(header):
        raise TableLoadError(path, f"line 1: duplicate column names in header {header}")
    rows = [_label_fields(line, len(header), n, path) for n, line in enumerate(lines[1:], 2)]
    if not rows:
        raise TableLoadError(path, "no labels after the header row")
    columns = list(zip(*rows, strict=True))
    metadata = {
        name: _parse_column(column) for name, column in zip(header[1:], columns[1:], strict=True)
    }
    return list(columns[0]), metadata


def _label_fields(line: str, columns: int, number: int, path: Path) -> list[str]:
    fields = line.split("\t")
    if len(fields) != columns:
        raise TableLoadError(
            path, f"line {number}: expected {columns} tab-separated columns, found {len(fields)}"
        )
    return fields


def _parse_column(values: Sequence[str]) -> list[MetadataValue]:
    for kind in (int, float):
        try:
            return [kind(value) for value in values]
        except ValueError:
            continue
    return list(values)


def _read_float32(path: Path) -> np.ndarray:
    try:
        return np.fromfile(path, dtype="<f4")
    except (OSError, ValueError) as error:
        raise TableLoadError(path, f"cannot read float32 data: {error}") from None


# --- NumPy .npy -------------------------------------------------------------------------------


def load_npy(path: str | Path, vocab_path: str | Path | None = None) -> EmbeddingTable:
    """Load a NumPy `.npy` matrix plus a vocabulary file with one token per line."""
    path = Path(path)
    vectors = _read_npy(path)
    vocab = (
        Path(vocab_path)
        if vocab_path
        else _first_existing(
            path, [path.with_suffix(".vocab"), path.with_suffix(".txt")], "vocabulary"
        )
    )
    tokens = _read_lines(vocab)
    _check_vocabulary(vocab, len(tokens), len(vectors), path)
    return EmbeddingTable(tokens, vectors, source=str(path))


def _read_npy(path: Path) -> np.ndarray:
    _require_file(path)
    try:
        array = np.load(path, allow_pickle=False)
    # The header parser beneath np.load raises many types on garbled input (ValueError,
    # SyntaxError, tokenize.TokenError, EOFError, MemoryError for an absurd shape, ...).
    except Exception as error:
        raise TableLoadError(path, f"not a readable .npy file: {error}") from None
    if not isinstance(array, np.ndarray):
        raise TableLoadError(path, "expected one .npy array, got an .npz archive")
    if array.ndim != 2:
        raise TableLoadError(
            path, f"wrong shape {array.shape}: expected a 2-D (rows, width) matrix"
        )
    return array


# --- Hugging Face safetensors -----------------------------------------------------------------


def load_huggingface(
    path: str | Path, tensor: str = DEFAULT_TENSOR, vocab: str | Path | None = None
) -> EmbeddingTable:
    """Load one tensor of a Hugging Face model (directory or `.safetensors` file) as the table."""
    path = Path(path)
    vectors = _read_tensor(_weights_file(path, tensor), tensor)
    folder = path if path.is_dir() else path.parent
    vocab_path = (
        Path(vocab)
        if vocab
        else _first_existing(path, [folder / "vocab.txt", folder / "tokenizer.json"], "vocabulary")
    )
    is_json = vocab_path.suffix == ".json"
    tokens = _read_tokenizer(vocab_path) if is_json else _read_lines(vocab_path)
    _check_vocabulary(vocab_path, len(tokens), len(vectors), path)
    return EmbeddingTable(tokens, vectors, source=str(path))


def _weights_file(path: Path, tensor: str) -> Path:
    if not path.exists():
        raise TableLoadError(path, "no such file or directory")
    if not path.is_dir():
        return path
    if (path / "model.safetensors").is_file():
        return path / "model.safetensors"
    index = path / "model.safetensors.index.json"
    if not index.is_file():
        raise TableLoadError(path, "no model.safetensors or model.safetensors.index.json here")
    weight_map = _read_json(index).get("weight_map")
    if not isinstance(weight_map, dict):
        raise TableLoadError(index, "no 'weight_map' object in the index")
    if tensor not in weight_map:
        raise TableLoadError(index, _missing_tensor(tensor, list(weight_map)))
    return path / Path(str(weight_map[tensor])).name


def _read_tensor(path: Path, tensor: str) -> np.ndarray:
    _require_file(path)
    try:
        with safe_open(path, framework="numpy") as handle:
            names = list(handle.keys())
            if tensor not in names:
                raise TableLoadError(path, _missing_tensor(tensor, names))
            if handle.get_slice(tensor).get_dtype() == "BF16":
                return _read_bfloat16(path, tensor)
            return np.asarray(handle.get_tensor(tensor))
    except (SafetensorError, OSError, ValueError, TypeError, KeyError) as error:
        raise TableLoadError(path, f"cannot read tensor {tensor!r}: {error}") from None


def _read_bfloat16(path: Path, tensor: str) -> np.ndarray:
    # numpy has no bfloat16, but a bfloat16 is the top half of a float32: widen by shifting.
    with path.open("rb") as handle:
        header_size = int.from_bytes(handle.read(8), "little")
        entry = json.loads(handle.read(header_size))[tensor]
    begin, end = entry["data_offsets"]
    raw = np.fromfile(path, dtype="<u2", count=(end - begin) // 2, offset=8 + header_size + begin)
    return (raw.astype(np.uint32) << 16).view(np.float32).reshape(entry["shape"])


def _missing_tensor(tensor: str, names: list[str]) -> str:
    # Embedding-like names first: they are what the caller most likely meant.
    shown = ", ".join(sorted(names, key=lambda name: "embed" not in name)[:5])
    return f"no tensor {tensor!r}; {len(names)} tensors available, e.g. {shown}"


def _read_tokenizer(path: Path) -> list[str]:
    data = _read_json(path)
    try:
        vocab = data["model"]["vocab"]
        # WordPiece/BPE store {token: id}; Unigram stores [[token, score], ...] in id order.
        by_id = (
            {i: str(entry[0]) for i, entry in enumerate(vocab)}
            if isinstance(vocab, list)
            else {int(i): str(token) for token, i in vocab.items()}
        )
        by_id.update({int(t["id"]): str(t["content"]) for t in data.get("added_tokens", [])})
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
        raise TableLoadError(path, f"no usable model.vocab / added_tokens: {error!r}") from None
    if sorted(by_id) != list(range(len(by_id))):
        raise TableLoadError(
            path, f"token ids are not exactly 0..{len(by_id) - 1} ({min(by_id)}..{max(by_id)})"
        )
    return [by_id[i] for i in range(len(by_id))]


# --- shared file helpers ----------------------------------------------------------------------


def _require_file(path: Path) -> int:
    """Size of `path`; raises TableLoadError unless it is a non-empty regular file."""
    try:
        status = path.stat()
    except FileNotFoundError:
        raise TableLoadError(path, "no such file") from None
    except OSError as error:
        raise _read_error(path, error) from None
    if stat.S_ISDIR(status.st_mode):
        raise TableLoadError(path, "is a directory, not a file")
    if not stat.S_ISREG(status.st_mode):  # a FIFO or device could block reads forever
        raise TableLoadError(path, "not a regular file")
    if status.st_size == 0:
        raise TableLoadError(path, "file is empty")
    return status.st_size


@contextmanager
def _open(path: Path) -> Iterator[BinaryIO]:
    _require_file(path)
    try:
        handle = path.open("rb")
    except OSError as error:
        raise _read_error(path, error) from None
    with handle:
        yield handle


@contextmanager
def _mapped(path: Path) -> Iterator[mmap.mmap]:
    # Mapping instead of reading keeps multi-gigabyte word2vec files out of process memory.
    with _open(path) as handle:
        try:
            data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as error:
            raise _read_error(path, error) from None
        with data:
            yield data


def _read_error(path: Path, error: Exception) -> TableLoadError:
    return TableLoadError(path, f"cannot read: {getattr(error, 'strerror', None) or error}")


def _read_text(path: Path) -> str:
    with _open(path) as handle:
        try:
            data = handle.read()
        except OSError as error:
            raise _read_error(path, error) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise TableLoadError(path, f"line {line}: invalid UTF-8 at byte {error.start}") from None


def _read_lines(path: Path) -> list[str]:
    """One entry per line, split on "\\n" only: unicode line separators can be tokens."""
    lines = [line.removesuffix("\r") for line in _read_text(path).split("\n")]
    if lines[-1] == "" and len(lines) > 1:
        lines.pop()
    return lines


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(_read_text(path))
    except ValueError as error:
        raise TableLoadError(path, f"invalid JSON: {error}") from None
    if not isinstance(data, dict):
        raise TableLoadError(path, f"expected a JSON object, got {type(data).__name__}")
    return data


def _first_line(path: Path) -> str:
    with _open(path) as handle:
        try:
            return handle.readline(4096).decode("utf-8", "replace")
        except OSError as error:
            raise _read_error(path, error) from None


def _first_existing(path: Path, candidates: list[Path], what: str) -> Path:
    for candidate in candidates:
        if candidate.exists():
            return candidate
    looked = ", ".join(candidate.name for candidate in candidates)
    raise TableLoadError(path, f"no {what} file found next to it (looked for {looked})")


def _check_vocabulary(vocab: Path, tokens: int, rows: int, table: Path) -> None:
    if tokens != rows:
        raise TableLoadError(
            vocab, f"vocabulary has {tokens} tokens but {table.name} has {rows} rows"
        )
