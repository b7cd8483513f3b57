"""Hugging Face models: one safetensors tensor as the table, tokens from the tokenizer files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from safetensors import SafetensorError, safe_open

from service.engine.errors import TableLoadError
from service.engine.files.reading import (
    check_vocabulary,
    first_existing,
    read_error,
    read_json,
    read_lines,
    require_file,
)
from service.engine.loaders.checkpoints import checkpoint_hint
from service.engine.loaders.options import DEFAULTS, LoadOptions
from service.engine.tables.table import EmbeddingTable
from service.engine.tables.text import HuggingFaceTokenizer


def load_huggingface(path: str | Path, options: LoadOptions = DEFAULTS) -> EmbeddingTable:
    """Load one tensor of a Hugging Face model (directory or `.safetensors` file) as the table."""
    path = Path(path)
    weights = _weights_file(path, options.tensor)
    vectors = _read_tensor(weights, options.tensor, options.limit)
    folder = path if path.is_dir() else path.parent
    vocab_path = (
        Path(options.vocab)
        if options.vocab
        else first_existing(path, [folder / "vocab.txt", folder / "tokenizer.json"], "vocabulary")
    )
    is_json = vocab_path.suffix == ".json"
    errors = options.unicode_errors
    tokens = _read_tokenizer(vocab_path) if is_json else read_lines(vocab_path, errors)
    check_vocabulary(vocab_path, len(tokens), _tensor_rows(weights, options.tensor), path)
    tokenizer = _tokenizer(folder, vocab_path, tokens, len(vectors))
    return EmbeddingTable(tokens[: len(vectors)], vectors, source=str(path), tokenizer=tokenizer)


def _tokenizer(
    folder: Path, vocab_path: Path, tokens: list[str], rows: int
) -> HuggingFaceTokenizer | None:
    """The model's tokenizer.json, checked against the vocabulary, when there is one.

    A table loaded with a `limit` has none: the model's split could name rows not loaded.
    """
    path = vocab_path if vocab_path.suffix == ".json" else folder / "tokenizer.json"
    if rows < len(tokens) or not path.exists():
        return None
    return HuggingFaceTokenizer.load(path, tokens)


def _weights_file(path: Path, tensor: str) -> Path:
    if not path.exists():
        raise TableLoadError(path, "no such file or directory")
    if not path.is_dir():
        return path
    if (path / "model.safetensors").is_file():
        return path / "model.safetensors"
    index = path / "model.safetensors.index.json"
    if not index.is_file():
        hint = checkpoint_hint(path)
        raise TableLoadError(
            path, f"no model.safetensors or model.safetensors.index.json here{hint}"
        )
    weight_map = read_json(index).get("weight_map")
    if not isinstance(weight_map, dict):
        raise TableLoadError(index, "no 'weight_map' object in the index")
    if tensor not in weight_map:
        raise TableLoadError(index, _missing_tensor(tensor, list(weight_map)))
    return path / Path(str(weight_map[tensor])).name


def _read_tensor(path: Path, tensor: str, limit: int | None) -> np.ndarray:
    require_file(path)
    try:
        with safe_open(path, framework="numpy") as handle:
            names = list(handle.keys())
            if tensor not in names:
                raise TableLoadError(path, _missing_tensor(tensor, names))
            rows = handle.get_slice(tensor)
            if rows.get_dtype() == "BF16":
                widened = _read_bfloat16(path, tensor)
                return widened[:limit].copy() if limit else widened
            return np.asarray(rows[:limit] if limit else handle.get_tensor(tensor))
    except OSError as error:
        raise read_error(path, error) from None
    # The library's messages can quote the header (an unknown dtype, a key), so none is passed on.
    except (SafetensorError, ValueError, TypeError, KeyError):
        raise TableLoadError(
            path, f"cannot read tensor {tensor!r}: not a valid safetensors file"
        ) from None


def _tensor_rows(path: Path, tensor: str) -> int:
    with safe_open(path, framework="numpy") as handle:
        return int(handle.get_slice(tensor).get_shape()[0])


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
    data = read_json(path)
    try:
        vocab = data["model"]["vocab"]
        # WordPiece/BPE store {token: id}; Unigram stores [[token, score], ...] in id order.
        by_id = (
            {i: str(entry[0]) for i, entry in enumerate(vocab)}
            if isinstance(vocab, list)
            else {int(i): str(token) for token, i in vocab.items()}
        )
        by_id.update({int(t["id"]): str(t["content"]) for t in data.get("added_tokens", [])})
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        raise TableLoadError(
            path, "no usable model.vocab / added_tokens (token -> integer id, or [token, score])"
        ) from None
    if sorted(by_id) != list(range(len(by_id))):
        raise TableLoadError(
            path, f"token ids are not exactly 0..{len(by_id) - 1} ({min(by_id)}..{max(by_id)})"
        )
    return [by_id[i] for i in range(len(by_id))]
