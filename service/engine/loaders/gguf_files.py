"""GGUF files (llama.cpp, Ollama): the token embedding, the output table, the vocabulary.

`token_embd.weight` is dequantised to float32 block by block into the table's one copy (F32,
F16, BF16, Q8_0, the k-quants: whatever the `gguf` package dequantises), `output.weight` too
when the model is untied. The tokens and their types come from the file's metadata
(`tokenizer.ggml.tokens`, `tokenizer.ggml.token_type`: control tokens are marked `control` in
the `token_type` column). A byte-level BPE model (`tokenizer.ggml.model` "gpt2") whose
pre-tokenizer the tokenizers library reproduces exactly gets its tokenizer rebuilt from the
vocabulary and merges; any other says so in the table's facts, and text is then split by the
vocabulary, never by a silently different rule.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from service.engine.errors import TableLoadError
from service.engine.files.reading import require_file
from service.engine.loaders.options import DEFAULTS, LoadOptions
from service.engine.tables.layout import BLOCK_ROWS, Layout, blank
from service.engine.tables.model import PADDING, TIED, TOKEN_TYPE, ModelFacts, padding_name
from service.engine.tables.pieces import BYTE_LEVEL, PLAIN, SENTENCEPIECE
from service.engine.tables.table import EmbeddingTable, MetadataValue
from service.engine.tables.text import HuggingFaceTokenizer

INPUT = "token_embd.weight"
OUTPUT = "output.weight"
# llama.cpp's token types (llama_token_type), as the token_type column names them.
TOKEN_TYPES = {1: "normal", 2: "unknown", 3: "control", 4: "user_defined", 5: "unused", 6: "byte"}
# The pre-tokenizers the tokenizers library reproduces exactly, by GGUF's name for them:
# GPT-2's rule, and SmolLM's / StarCoder's (every digit on its own first).
_DIGITS_FIRST = {"smollm", "starcoder"}
_BYTE_LEVEL_RULES = {"gpt2", *_DIGITS_FIRST}


def load_gguf(path: str | Path, options: LoadOptions = DEFAULTS) -> EmbeddingTable:
    """Load a GGUF model's token embedding (and untied output table) as a table."""
    path = Path(path)
    require_file(path)
    reader = _reader(path)
    tensors = {tensor.name: tensor for tensor in reader.tensors}
    if INPUT not in tensors:
        raise TableLoadError(path, f"no {INPUT} tensor: not a language model's GGUF file")
    tokens = _strings(path, reader, "tokenizer.ggml.tokens")
    embedding = tensors[INPUT]
    rows = int(embedding.shape[-1])
    if rows < len(tokens):
        raise TableLoadError(
            path, f"the vocabulary has {len(tokens)} tokens but {INPUT} has {rows} rows"
        )
    vectors = _dequantised(path, embedding, options.limit, options.layout)
    head = tensors.get(OUTPUT)
    output = None if head is None else _dequantised(path, head, options.limit)
    named = tokens + [padding_name(row) for row in range(len(tokens), rows)]
    style, tokenizer, notes = _tokenizer(reader, tokens, len(vectors) >= len(tokens))
    facts = ModelFacts(
        source_format="gguf",
        input_tensor=INPUT,
        stored_dtype=embedding.tensor_type.name,
        tokens=len(tokens),
        padding_rows=rows - len(tokens),
        head=TIED if head is None else OUTPUT,
        head_dtype=None if head is None else head.tensor_type.name,
        total_parameters=sum(int(tensor.n_elements) for tensor in reader.tensors),
        pieces=style,
        notes=tuple(notes),
    )
    types = _token_types(reader, len(tokens), rows)[: len(vectors)]
    return EmbeddingTable(
        named[: len(vectors)],
        vectors,
        {TOKEN_TYPE: types},
        source=str(path),
        tokenizer=tokenizer,
        output=output,
        model=facts,
        layout=options.layout,
    )


def _reader(path: Path) -> Any:
    from gguf import GGUFReader  # imported only for GGUF tables

    try:
        return GGUFReader(path)
    # The reader's messages can quote the file (a key, a value), so none is passed on.
    except (ValueError, KeyError, IndexError, TypeError, UnicodeDecodeError):
        raise TableLoadError(path, "not a GGUF file, or a damaged one") from None
    except OSError as error:
        raise TableLoadError(path, f"cannot read it ({error.strerror})") from None


def _field(path: Path, reader: Any, key: str) -> Any:
    field = reader.fields.get(key)
    if field is None:
        raise TableLoadError(path, f"no {key} in the metadata")
    return field.contents()


def _strings(path: Path, reader: Any, key: str) -> list[str]:
    values = _field(path, reader, key)
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise TableLoadError(path, f"{key} is not a list of strings")
    return values


def _dequantised(
    path: Path, tensor: Any, limit: int | None, layout: Layout = "columns"
) -> np.ndarray:
    """A 2-D tensor's first `limit` rows as float32 held in `layout`, a block of rows at a
    time."""
    from gguf.quants import dequantize

    if len(tensor.shape) != 2:
        raise TableLoadError(path, f"{tensor.name} has {len(tensor.shape)} dimensions, not 2")
    width, rows = (int(n) for n in tensor.shape)  # GGUF lists the fastest dimension first
    wanted = rows if limit is None else min(limit, rows)
    held = blank(wanted, width, layout)
    try:
        for first in range(0, wanted, BLOCK_ROWS):
            last = min(first + BLOCK_ROWS, wanted)
            block = dequantize(tensor.data[first:last], tensor.tensor_type)
            held[first:last] = block.reshape(last - first, width)
    except (NotImplementedError, ValueError):
        raise TableLoadError(
            path, f"{tensor.name} is {tensor.tensor_type.name}, which cannot be dequantised"
        ) from None
    return held


def _token_types(reader: Any, tokens: int, rows: int) -> list[MetadataValue]:
    field = reader.fields.get("tokenizer.ggml.token_type")
    codes = [] if field is None else list(field.contents())
    names: list[MetadataValue] = [TOKEN_TYPES.get(int(code), "normal") for code in codes]
    names += ["normal"] * (tokens - len(names))
    return names[:tokens] + [PADDING] * (rows - tokens)


def _tokenizer(
    reader: Any, tokens: list[str], whole: bool
) -> tuple[str, HuggingFaceTokenizer | None, list[str]]:
    """(how the pieces are written, the rebuilt tokenizer or None, what the facts say)."""
    model = _optional(reader, "tokenizer.ggml.model")
    pre = _optional(reader, "tokenizer.ggml.pre") or "default"
    if model == "llama":
        note = f"SentencePiece ({model}) tokenizer not rebuilt: text is split by the vocabulary"
        return SENTENCEPIECE, None, [note]
    if model != "gpt2":
        return PLAIN, None, [f"tokenizer {model!r} not rebuilt: text is split by the vocabulary"]
    if pre not in _BYTE_LEVEL_RULES:
        note = (
            f"pre-tokenizer {pre!r} cannot be reproduced exactly: text is split by the vocabulary"
        )
        return BYTE_LEVEL, None, [note]
    if not whole:
        return BYTE_LEVEL, None, []
    merges = reader.fields.get("tokenizer.ggml.merges")
    if merges is None:
        return BYTE_LEVEL, None, ["no merges in the file: text is split by the vocabulary"]
    return BYTE_LEVEL, _byte_level(reader, tokens, list(merges.contents()), pre), []


def _optional(reader: Any, key: str) -> str | None:
    field = reader.fields.get(key)
    return None if field is None else str(field.contents())


def _byte_level(reader: Any, tokens: list[str], merges: list[str], pre: str) -> Any:
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    vocabulary = {token: row for row, token in enumerate(tokens)}
    pairs = [(left, right) for left, _, right in (merge.partition(" ") for merge in merges)]
    tokenizer = Tokenizer(models.BPE(vocabulary, pairs, fuse_unk=False))
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    rules = [pre_tokenizers.Digits(individual_digits=True)] if pre in _DIGITS_FIRST else []
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([*rules, byte_level])
    tokenizer.decoder = decoders.ByteLevel()
    types = _token_types(reader, len(tokens), len(tokens))
    control = [t for t, kind in zip(tokens, types, strict=True) if kind == "control"]
    tokenizer.add_special_tokens([AddedToken(token, special=True) for token in control])
    return HuggingFaceTokenizer(tokenizer)
