"""One loader per embedding file format; each returns a validated EmbeddingTable."""

from __future__ import annotations

from pathlib import Path

from service.engine.errors import TableLoadError
from service.engine.loaders.files import first_line
from service.engine.loaders.huggingface import DEFAULT_TENSOR, load_huggingface
from service.engine.loaders.numpy_files import load_npy
from service.engine.loaders.projector import load_projector
from service.engine.loaders.word2vec import (
    load_fasttext,
    load_glove,
    load_word2vec_binary,
    load_word2vec_text,
    parse_header,
)
from service.engine.table import EmbeddingTable

__all__ = [
    "DEFAULT_TENSOR",
    "FORMATS",
    "detect_format",
    "load_fasttext",
    "load_glove",
    "load_huggingface",
    "load_npy",
    "load_projector",
    "load_table",
    "load_word2vec_binary",
    "load_word2vec_text",
]

FORMATS = (
    "word2vec-binary",
    "word2vec-text",
    "glove",
    "fasttext",
    "projector",
    "npy",
    "huggingface",
)

_SUFFIX_FORMATS = {
    ".bin": "word2vec-binary",
    ".vec": "fasttext",
    ".bytes": "projector",
    ".npy": "npy",
    ".safetensors": "huggingface",
}


def detect_format(path: Path) -> str:
    """The format of `path` from its extension (sniffing `.txt`); a directory is huggingface."""
    path = Path(path)
    suffix = path.suffix.lower()
    if path.is_dir():
        return "huggingface"
    if suffix in _SUFFIX_FORMATS:
        return _SUFFIX_FORMATS[suffix]
    if suffix == ".txt":
        return "word2vec-text" if parse_header(first_line(path)) else "glove"
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
        # word2vec text, fastText and GloVe share one reader that sniffs the header itself.
        return load_word2vec_text(path)
    raise TableLoadError(path, f"unknown format {format!r}; known formats: {', '.join(FORMATS)}")
