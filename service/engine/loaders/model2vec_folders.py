"""Model2Vec folders, as `StaticModel.save_pretrained` writes them: a static embedding model.

    config.json         normalize, max_length (and what the distillation recorded)
    model.safetensors   `embeddings` (rows x width), optional `weights` (one per token)
    tokenizer.json      the model's tokenizer: row i is its token i

The rows, tokens and tokenizer are read as any Hugging Face model's (huggingface.py, with the
`embeddings` tensor named); the recipe of a text's vector (tables/embedding.py) from config.json
and the tokenizer, with Model2Vec's defaults: not normalised, max_length 512. A vocabulary-
quantised model (a `mapping` tensor: several tokens share a row) is refused: a table holds one
row per token. The rows are held row after row (tables/embedding.py says why).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from service.engine.errors import TableLoadError
from service.engine.files.reading import read_error, read_json, require_file
from service.engine.loaders.huggingface import load_huggingface
from service.engine.loaders.options import DEFAULTS, LoadOptions
from service.engine.loaders.safetensors_files import (
    ROW_TYPES,
    WEIGHTS,
    Tensor,
    model_tensors,
    read_header,
    widen,
)
from service.engine.tables.embedding import HELD_BY, StaticEmbedding
from service.engine.tables.table import EmbeddingTable

CONFIG = "config.json"
TOKENIZER = "tokenizer.json"
EMBEDDINGS = "embeddings"
TOKEN_WEIGHTS = "weights"
MAPPING = "mapping"
# StaticModel's defaults when config.json does not say (model2vec/model.py).
DEFAULT_MAX_LENGTH = 512
DEFAULT_NORMALIZE = False


def is_model2vec(path: Path) -> bool:
    """Whether `path` is a Model2Vec folder: the three files, and an `embeddings` tensor."""
    files = (path / CONFIG, path / WEIGHTS, path / TOKENIZER)
    if not path.is_dir() or not all(file.is_file() for file in files):
        return False
    return EMBEDDINGS in read_header(path / WEIGHTS)


def load_model2vec(path: str | Path, options: LoadOptions = DEFAULTS) -> EmbeddingTable:
    """A Model2Vec folder as a table that embeds text as StaticModel.encode does."""
    path = Path(path)
    if not path.exists():
        raise TableLoadError(path, "no such file or directory")
    if not path.is_dir():
        raise TableLoadError(path, "is a file: a Model2Vec model is a folder (config.json, "
                             "model.safetensors, tokenizer.json)")  # fmt: skip
    if options.limit is not None:
        raise TableLoadError(path, "limit does not apply to a static model: its tokenizer "
                             "names every row")  # fmt: skip
    tensors = model_tensors(path).tensors
    if MAPPING in tensors:
        raise TableLoadError(
            path / WEIGHTS,
            "is vocabulary-quantised (a `mapping` tensor: tokens share rows), which is not "
            "served: save the model without vocabulary quantisation",
        )
    config = read_json(path / CONFIG)
    read = replace(options, vocab=path / TOKENIZER, tensor=EMBEDDINGS, layout=HELD_BY)
    table = load_huggingface(path, read)
    weights = tensors.get(TOKEN_WEIGHTS)
    static = StaticEmbedding(
        library="model2vec",
        normalize=_normalize(path / CONFIG, config),
        **_truncation(path / CONFIG, config, table),
        unknown_id=unknown_id(table),
        weights=None if weights is None else read_weights(weights, table.rows),
    )
    return replace(table, static=static, checked=True)


def _normalize(path: Path, config: dict[str, Any]) -> bool:
    normalize = config.get("normalize", DEFAULT_NORMALIZE)
    if not isinstance(normalize, bool):
        raise TableLoadError(path, "normalize is not true or false")
    return normalize


def _truncation(path: Path, config: dict[str, Any], table: EmbeddingTable) -> dict[str, Any]:
    """max_length (None: no truncation) and the characters StaticModel.encode reads: max_length
    times the median token length (Python characters of every token, by id)."""
    max_length = config.get("max_length", DEFAULT_MAX_LENGTH)
    if max_length is None:
        return {"max_tokens": None, "max_characters": None}
    if not isinstance(max_length, int) or isinstance(max_length, bool) or max_length < 1:
        raise TableLoadError(path, "max_length is not a positive integer or null")
    median = int(np.median([len(token) for token in table.tokens]))
    return {"max_tokens": max_length, "max_characters": max_length * median}


def unknown_id(table: EmbeddingTable) -> int | None:
    """The piece Model2Vec drops from every split: the model's unknown token (WordPiece, BPE,
    WordLevel name it; Unigram gives its id), when the vocabulary has it."""
    assert table.tokenizer is not None, "a Model2Vec folder has its tokenizer"
    tokenizer = table.tokenizer.tokenizer
    token = getattr(tokenizer.model, "unk_token", None)
    if token is not None:
        return tokenizer.token_to_id(token)
    found = json.loads(tokenizer.to_str())["model"].get("unk_id")
    return None if found is None else int(found)


def read_weights(tensor: Tensor, rows: int) -> np.ndarray:
    """The per-token weights: one float per row, as float32."""
    if len(tensor.shape) != 1 or tensor.shape[0] != rows:
        shape = " x ".join(map(str, tensor.shape))
        raise TableLoadError(
            tensor.path, f"the token weights ({tensor.named}) are {shape}, not one per row ({rows})"
        )
    if tensor.dtype not in ROW_TYPES:
        raise TableLoadError(
            tensor.path, f"the token weights ({tensor.named}) are not of a floating-point type"
        )
    require_file(tensor.path)
    try:
        stored = np.memmap(tensor.path, ROW_TYPES[tensor.dtype], "r", tensor.start, (rows,))
        weights = widen(np.asarray(stored), tensor.dtype)
    except OSError as error:
        raise read_error(tensor.path, error) from None
    if not np.isfinite(weights).all():
        raise TableLoadError(tensor.path, f"the token weights ({tensor.named}) are not finite")
    return np.ascontiguousarray(weights, dtype=np.float32)
