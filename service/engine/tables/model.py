"""What a language model's table knows of its model: the tokens, padding, head and sizes.

A table read from a model folder or a GGUF file carries a `ModelFacts`: how many rows are the
tokenizer's tokens and how many are padding past them, which rows score the next token (the
input rows when the embeddings are tied, else the output table's: `head` names its tensor), how
the rows were stored (and widened once to float32), every parameter of the model (counted from
the files' headers, never their weights), how the tokens are written (byte-level BPE,
SentencePiece) and anything the service cannot reproduce exactly. `size_table` turns them into
the numbers of the size table that GET /v1/tables/{table} and `info` answer.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from service.engine.tables.table import EmbeddingTable

TIED = "tied"
# The metadata column that marks padding rows (and special tokens) as such.
TOKEN_TYPE = "token_type"
PADDING = "padding"
NORMAL = "normal"
SPECIAL = "special"


def padding_name(row: int) -> str:
    """The token of a padding row: a space in it, which no byte-level, SentencePiece or
    WordPiece token holds (each writes its spaces as another character or splits on them)."""
    return f"<row {row}>"


@dataclass(frozen=True)
class ModelFacts:
    """A language model table's facts beyond its rows (see the module's docstring)."""

    source_format: str  # "safetensors" or "gguf"
    input_tensor: str
    stored_dtype: str  # the input table's type in the file: F32, F16, BF16, Q8_0, ...
    tokens: int  # the tokenizer's tokens: rows 0 .. tokens - 1
    padding_rows: int  # the rows past them
    head: str = TIED  # "tied", or the output table's tensor
    head_dtype: str | None = None
    total_parameters: int | None = None  # every tensor of the model, from the headers
    pieces: str = "plain"  # how tokens are written: "byte-level", "sentencepiece", "plain"
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def tied(self) -> bool:
        """Whether the input rows also score the next token."""
        return self.head == TIED

    def to_json(self) -> dict[str, Any]:
        """A plain dict (a prepared folder's manifest keeps it)."""
        facts = asdict(self)
        facts["notes"] = list(self.notes)
        return facts

    @classmethod
    def of_json(cls, facts: dict[str, Any]) -> ModelFacts:
        """The facts a manifest kept."""
        return cls(**{**facts, "notes": tuple(facts.get("notes", ()))})


def widened(dtype: str) -> str | None:
    """How rows stored as `dtype` came to be float32, or None when they already were."""
    names = {"BF16": "bfloat16", "F16": "float16", "F64": "float64"}
    if dtype == "F32":
        return None
    if dtype in names:
        return f"{names[dtype]} rows widened once to float32"
    return f"{dtype} rows dequantised once to float32"


def head_of(table: EmbeddingTable) -> str | None:
    """What scores a language model's next token: "tied" (its input rows) or the output
    tensor's name; None for a table that is no model's (word vectors have no head: /score
    scores its own rows)."""
    return None if table.model is None else table.model.head


def model_sizes(table: EmbeddingTable) -> dict[str, Any]:
    """A model table's size table (see size_table)."""
    assert table.model is not None, "only a model's table has a size table"
    return size_table(table.model, table.rows, table.width, table.output is not None)


def size_table(facts: ModelFacts, rows: int, width: int, untied: bool) -> dict[str, Any]:
    """The size table: vocabulary, width, each table's parameters and share of the model."""
    embedding = rows * width
    output = embedding if untied else None
    total = facts.total_parameters
    table: dict[str, Any] = {
        "vocabulary": facts.tokens,
        "padding_rows": facts.padding_rows,
        "rows": rows,
        "width": width,
        "embedding_parameters": embedding,
        "output_parameters": output,
        "total_parameters": total,
        "embedding_share": _share(embedding, total),
        "output_share": None if output is None else _share(output, total),
        "head": facts.head,
        "input_tensor": facts.input_tensor,
        "stored_dtype": facts.stored_dtype,
        "head_dtype": facts.head_dtype,
        "widened": widened(facts.stored_dtype),
        "source_format": facts.source_format,
        "pieces": facts.pieces,
        "notes": list(facts.notes),
    }
    return table


def _share(parameters: int, total: int | None) -> float | None:
    return None if not total else parameters / total
