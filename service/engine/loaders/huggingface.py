"""Hugging Face models: the input embedding found in the safetensors headers, tokens from the
tokenizer files, and a language model's output table, padding rows and size.

Only the headers and the chosen tensors are read (safetensors_files.py); which tensors are the
tables is decided by model_tables.py. Rows past the tokenizer's tokens (a vocabulary padded to a
multiple of 64, as Qwen, Phi and Pythia ship) are padding: named `<row N>` and marked so in the
`token_type` metadata column (tables/model.py).
"""

from __future__ import annotations

from pathlib import Path

from service.engine.errors import TableLoadError
from service.engine.files.reading import (
    check_vocabulary,
    first_existing,
    read_json,
    read_lines,
)
from service.engine.loaders.model_tables import Chosen, choose, read_config
from service.engine.loaders.options import DEFAULTS, LoadOptions
from service.engine.loaders.safetensors_files import ModelTensors, model_tensors, read_rows
from service.engine.tables.model import (
    NORMAL,
    PADDING,
    TIED,
    TOKEN_TYPE,
    ModelFacts,
    padding_name,
)
from service.engine.tables.pieces import PLAIN, style_of_tokenizer
from service.engine.tables.table import EmbeddingTable, MetadataValue
from service.engine.tables.text import HuggingFaceTokenizer


def load_huggingface(path: str | Path, options: LoadOptions = DEFAULTS) -> EmbeddingTable:
    """Load a Hugging Face model (directory, `.safetensors` file or sharded index) as a table:
    its input embedding (found, or the `tensor` option's), and its output table when untied."""
    path = Path(path)
    model = model_tensors(path)
    vocab_path = _vocabulary_file(path, model.folder, options)
    tokens = _read_vocabulary(vocab_path, options)
    chosen = choose(model, read_config(model.folder), len(tokens), options.tensor)
    rows = _checked_rows(chosen, vocab_path, len(tokens), path)
    vectors = read_rows(chosen.input, options.limit, "the input embedding", options.layout)
    output = None if chosen.head is None else read_rows(chosen.head, options.limit, "the head")
    named = tokens + [padding_name(row) for row in range(len(tokens), rows)]
    return EmbeddingTable(
        named[: len(vectors)],
        vectors,
        _padding_column(len(tokens), len(vectors)),
        source=str(path),
        tokenizer=_tokenizer(model.folder, vocab_path, tokens, len(vectors)),
        output=output,
        model=_facts(model, chosen, vocab_path, len(tokens)),
        layout=options.layout,
    )


def _vocabulary_file(path: Path, folder: Path, options: LoadOptions) -> Path:
    if options.vocab:
        return Path(options.vocab)
    candidates = [folder / "vocab.txt", folder / "tokenizer.json"]
    return first_existing(path, candidates, "vocabulary")


def _read_vocabulary(path: Path, options: LoadOptions) -> list[str]:
    if path.suffix == ".json":
        return _read_tokenizer(path)
    return read_lines(path, options.unicode_errors)


def _checked_rows(chosen: Chosen, vocab_path: Path, tokens: int, path: Path) -> int:
    """The input embedding's rows (2-D, as chosen): at least one per token, more are padding."""
    rows = chosen.input.shape[0]
    if rows < tokens:
        check_vocabulary(vocab_path, tokens, rows, path)
    return rows


def _padding_column(tokens: int, rows: int) -> dict[str, list[MetadataValue]]:
    """The token_type column when some rows are padding (none for an unpadded table)."""
    if rows <= tokens:
        return {}
    types: list[MetadataValue] = [NORMAL] * tokens
    return {TOKEN_TYPE: types + [PADDING] * (rows - tokens)}


def _facts(model: ModelTensors, chosen: Chosen, vocab_path: Path, tokens: int) -> ModelFacts:
    head = chosen.head
    return ModelFacts(
        source_format="safetensors",
        input_tensor=chosen.input.name,
        stored_dtype=chosen.input.dtype,
        tokens=tokens,
        padding_rows=max(0, chosen.input.shape[0] - tokens),
        head=chosen.input.name if chosen.input_is_head else (TIED if head is None else head.name),
        head_dtype=None if head is None else head.dtype,
        total_parameters=model.total_parameters,
        pieces=_pieces(model.folder, vocab_path),
    )


def _pieces(folder: Path, vocab_path: Path) -> str:
    path = vocab_path if vocab_path.suffix == ".json" else folder / "tokenizer.json"
    if not path.is_file():
        return PLAIN
    return style_of_tokenizer(read_json(path))


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
