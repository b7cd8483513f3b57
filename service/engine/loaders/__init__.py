"""One loader per embedding file format; each returns a validated EmbeddingTable.

`load_table` is where every read starts: it guesses the format from the path and dispatches through
`LOADERS`, the one table from format name to loader. Every loader takes the path and a
`LoadOptions`.
"""

from __future__ import annotations

from service.engine.loaders.formats import FORMATS, LOADERS, detect_format, load_table
from service.engine.loaders.huggingface import load_huggingface
from service.engine.loaders.numpy_files import load_npy
from service.engine.loaders.options import DEFAULT_TENSOR, LoadOptions, UnicodeErrors
from service.engine.loaders.projector import load_projector
from service.engine.loaders.text import load_text
from service.engine.loaders.word2vec_binary import load_word2vec_binary

__all__ = [
    "DEFAULT_TENSOR",
    "FORMATS",
    "LOADERS",
    "LoadOptions",
    "UnicodeErrors",
    "detect_format",
    "load_huggingface",
    "load_npy",
    "load_projector",
    "load_table",
    "load_text",
    "load_word2vec_binary",
]
