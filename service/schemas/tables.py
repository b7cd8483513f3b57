"""The facts of a served table: size, provenance, checkpoints, and its search index."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
)

from service.schemas.common import Strict
from service.schemas.embedding import StaticEmbeddingInfo


class IndexInfo(BaseModel):
    """A table's search index: exact, or an approximate one with its measured recall."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["exact", "hnsw", "hnswsq", "ivf", "ivfpq", "fastscan"]
    state: Literal["exact", "pending", "building", "measuring", "ready", "failed"] = Field(
        description="building: the table serves exactly until the index is ready."
    )
    parameters: dict[str, int | float | str]
    bytes: int | None = Field(description="Bytes the approximate index holds.")
    source: str | None = Field(description="The file it was read from, or built.")
    build_seconds: float | None
    recall_at_10: float | None = Field(
        description="Recall@10 against the exact path on held-out rows (token-neighbour "
        "queries), measured when the index was built or loaded."
    )
    recall_queries: int | None
    error: str | None
    progress: float | None = Field(None, description="While building: the share of rows added.")
    eta_seconds: float | None = Field(None, description="While building: seconds left.")


class CheckpointInfo(Strict):
    """One version of a table's rows: its place in the set, its name and its file."""

    index: int
    label: str = Field(description="The file name without its format's suffixes.")
    source: str = Field(description="The file's name (no directories).")


class ModelSizes(Strict):
    """A language model's table: the size table's numbers, read from the model's files."""

    vocabulary: int = Field(description="The tokenizer's tokens: rows 0 .. vocabulary - 1.")
    padding_rows: int = Field(
        description="Rows past the tokens, named `<row N>`; searched only by a `restrict` that "
        "reaches them, and reference rows of /diagnostics."
    )
    rows: int
    width: int
    embedding_parameters: int = Field(description="rows x width of the input embedding.")
    output_parameters: int | None = Field(description="rows x width of the output table, untied.")
    total_parameters: int | None = Field(
        description="Every tensor of the model, summed from the files' headers."
    )
    embedding_share: float | None = Field(description="embedding / total parameters.")
    output_share: float | None = Field(description="output / total parameters, untied.")
    head: str = Field(description='What /score scores against: "tied" or the output tensor.')
    input_tensor: str
    stored_dtype: str = Field(description="The input embedding's type in the file.")
    head_dtype: str | None
    widened: str | None = Field(description="How the rows became float32, if they were not.")
    source_format: str
    pieces: Literal["byte-level", "sentencepiece", "plain"] = Field(
        description="How the tokens write their text; `text` beside a token shows it readable."
    )
    notes: list[str]


class TableInfo(Strict):
    name: str
    rows: int
    width: int
    parameters: int
    bytes: int = Field(
        description="Bytes held: the float32 rows (one copy, memory-mapped when prepared), "
        "their norms, the vocabulary and any approximate index."
    )
    index_type: str
    index: IndexInfo
    zero_rows: int
    source: str
    loaded_at: datetime
    load_seconds: float
    version: str = Field(
        description="What names the table's content (its shape and checksums of its tokens and "
        "rows' norms): the same in every replica serving the same rows, another once they "
        "change. Every query's answer carries it in its Table-Version header."
    )
    metadata_columns: list[str]
    case_insensitive: bool
    checkpoints: list[CheckpointInfo] = Field(
        description="The table's versions, first to last (the served one); one for a plain table."
    )
    head: str | None = Field(
        description='A language model\'s head, the rows /score scores against: "tied" (its '
        "input rows) or the name of its output tensor; null for a table that is no model's "
        "(word vectors have no head: /score scores the table's own rows)."
    )
    model: ModelSizes | None = Field(
        description="A language model's size table (safetensors or GGUF); null otherwise."
    )
    embedding: StaticEmbeddingInfo | None = Field(
        None,
        description="A static embedding model's recipe for a text's vector (/v1/embeddings); "
        "null for a table that only names rows.",
    )


class TableList(Strict):
    tables: list[TableInfo]


class LimitsResponse(Strict):
    """The request limits this server enforces, each under its setting's name
    (docs/settings.md); a request past one is refused with 422 LimitExceeded naming it."""

    default_k: int
    max_k: int
    max_batch: int
    max_terms: int
    max_exclude: int
    max_cosine_rows: int
    max_among: int
    max_results: int
    max_directions: int
    max_matrix_tokens: int
    max_text_length: int
    max_embedding_inputs: int
    max_embedding_text_length: int
    max_projection_points: int
    max_diagnostics_limit: int
    max_evaluation_questions: int
    max_trajectory_points: int
    max_trajectory_values: int
    max_drift_limit: int
    max_drift_tokens: int
    max_body_bytes: int
