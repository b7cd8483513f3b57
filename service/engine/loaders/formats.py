"""One table from format name to loader: `load_table` dispatches through it, FORMATS lists it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from service.engine.errors import TableLoadError
from service.engine.files.reading import (
    compression,
    first_line,
    format_suffix,
    permission_errors,
)
from service.engine.loaders.gguf_files import load_gguf
from service.engine.loaders.huggingface import load_huggingface
from service.engine.loaders.model2vec_folders import is_model2vec, load_model2vec
from service.engine.loaders.numpy_files import load_npy
from service.engine.loaders.options import DEFAULT_TENSOR, LoadOptions, UnicodeErrors
from service.engine.loaders.projector import load_projector
from service.engine.loaders.text import load_text, parse_header
from service.engine.loaders.word2vec_binary import load_word2vec_binary
from service.engine.loaders.wordllama_files import is_wordllama, load_wordllama
from service.engine.tables.layout import Layout
from service.engine.tables.prepared import open_prepared
from service.engine.tables.table import EmbeddingTable

Loader = Callable[[Path, LoadOptions], EmbeddingTable]


def load_prepared(path: Path, options: LoadOptions) -> EmbeddingTable:
    """A prepared folder (service/engine/tables/prepared.py), memory-mapped."""
    if not path.exists():
        raise TableLoadError(path, "no such file or directory")
    if not path.is_dir():
        raise TableLoadError(path, "is a file, not a prepared table's folder")
    if options.limit is not None:
        raise TableLoadError(path, "limit does not apply to a prepared table: prepare it again")
    return open_prepared(path)


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
    "gguf": load_gguf,
    "prepared": load_prepared,
    # Static embedding models: a table that also embeds text (tables/embedding.py).
    "model2vec": load_model2vec,
    "wordllama": load_wordllama,
}
FORMATS = tuple(LOADERS)
# The formats read front to back, so a .gz or .bz2 file is decompressed while it is read.
STREAMED = frozenset({"word2vec-binary", "word2vec-text", "glove", "fasttext"})

_SUFFIX_FORMATS = {
    ".bin": "word2vec-binary",
    ".vec": "fasttext",
    ".bytes": "projector",
    ".npy": "npy",
    ".safetensors": "huggingface",
    ".gguf": "gguf",
}


def detect_format(path: Path) -> str:
    """The format of `path` from its extension (sniffing `.txt`); a directory is a prepared
    table when it has a manifest, a Model2Vec model when its safetensors hold `embeddings`,
    else huggingface; a `.safetensors` file is WordLlama's when its tokenizer is where
    WordLlama keeps it.

    A compression suffix is looked through: `vectors.bin.gz` is word2vec-binary.
    """
    path = Path(path)
    suffix = format_suffix(path)
    if path.is_dir():
        if (path / "table.json").is_file():
            return "prepared"
        return "model2vec" if is_model2vec(path) else "huggingface"
    if is_wordllama(path):
        return "wordllama"
    if suffix in _SUFFIX_FORMATS:
        return _SUFFIX_FORMATS[suffix]
    if suffix == ".txt":
        return "word2vec-text" if parse_header(first_line(path)) else "glove"
    if not path.exists():
        raise TableLoadError(path, "no such file or directory")
    known = ", ".join(sorted([*_SUFFIX_FORMATS, ".txt"])) + " (each may end in .gz or .bz2)"
    raise TableLoadError(
        path,
        f"unknown format: extension {suffix or '(none)'!r} is not one of {known}; "
        f"name its format ('format' in a table spec, --format on the command line): one of "
        f"{', '.join(FORMATS)}",
    )


def load_table(
    path: str | Path,
    format: str | None = None,
    *,
    vocab: str | Path | None = None,
    labels: str | Path | None = None,
    tensor: str | None = None,
    width: int | None = None,
    limit: int | None = None,
    unicode_errors: UnicodeErrors = "strict",
    layout: Layout = "columns",
) -> EmbeddingTable:
    """Load one table file in any supported format (auto-detected when format is None)."""
    path = Path(path)
    options = LoadOptions(
        vocab=Path(vocab) if vocab else None,
        labels=Path(labels) if labels else None,
        tensor=tensor or DEFAULT_TENSOR,
        width=width,
        limit=limit,
        unicode_errors=unicode_errors,
        layout=layout,
    )
    with permission_errors(path):
        return _load(path, format or detect_format(path), options)


def _load(path: Path, format: str, options: LoadOptions) -> EmbeddingTable:
    loader = LOADERS.get(format)
    if loader is None:
        known = ", ".join(FORMATS)
        raise TableLoadError(path, f"unknown format {format!r}; known formats: {known}")
    if compression(path) and format not in STREAMED:
        raise TableLoadError(path, f"{format} files cannot be read compressed: decompress first")
    return loader(path, options)
