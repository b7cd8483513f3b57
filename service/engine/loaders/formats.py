"""One table from format name to loader: `load_table` dispatches through it, FORMATS lists it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from service.engine.errors import TableLoadError
from service.engine.loaders.files import first_line
from service.engine.loaders.huggingface import load_huggingface
from service.engine.loaders.numpy_files import load_npy
from service.engine.loaders.options import DEFAULT_TENSOR, LoadOptions
from service.engine.loaders.projector import load_projector
from service.engine.loaders.text import load_text, parse_header
from service.engine.loaders.word2vec_binary import load_word2vec_binary
from service.engine.table import EmbeddingTable

Loader = Callable[[Path, LoadOptions], EmbeddingTable]

# word2vec text, fastText and GloVe differ only in the header, which load_text sniffs itself;
# the three names stay so that configurations can say what their file is.
LOADERS: dict[str, Loader] = {
    "word2vec-binary": load_word2vec_binary,
    "word2vec-text": load_text,
    "glove": load_text,
    "fasttext": load_text,
    "projector": load_projector,
    "npy": load_npy,
    "huggingface": load_huggingface,
}
FORMATS = tuple(LOADERS)

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
    loader = LOADERS.get(format or detect_format(path))
    if loader is None:
        raise TableLoadError(
            path, f"unknown format {format!r}; known formats: {', '.join(FORMATS)}"
        )
    options = LoadOptions(
        vocab=Path(vocab) if vocab else None,
        labels=Path(labels) if labels else None,
        tensor=tensor or DEFAULT_TENSOR,
        width=width,
    )
    return loader(path, options)
