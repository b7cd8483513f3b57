"""How to read a table file: the options every loader takes, one frozen value."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DEFAULT_TENSOR = "embeddings.word_embeddings.weight"


@dataclass(frozen=True)
class LoadOptions:
    """What a loader needs beyond the path; each format reads the fields that concern it."""

    vocab: Path | None = None
    labels: Path | None = None
    tensor: str = DEFAULT_TENSOR
    width: int | None = None


DEFAULTS = LoadOptions()
