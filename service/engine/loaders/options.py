"""How to read a table file: the options every loader takes, one frozen value."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from service.engine.tables.layout import Layout

# None: a model's input embedding is found from its config and tensors (model_tables.py).
DEFAULT_TENSOR: str | None = None

# As in gensim: how bytes that are not valid UTF-8 become text.
UnicodeErrors = Literal["strict", "replace", "ignore"]


@dataclass(frozen=True)
class LoadOptions:
    """What a loader needs beyond the path; each format reads the fields that concern it."""

    vocab: Path | None = None
    labels: Path | None = None
    tensor: str | None = DEFAULT_TENSOR
    width: int | None = None
    limit: int | None = None  # read only the first `limit` rows, as gensim's limit
    unicode_errors: UnicodeErrors = "strict"
    # How the table's rows are held (tables/layout.py): a loader lays them out so as it reads,
    # so a table served by rows never has a second copy by columns.
    layout: Layout = "columns"


DEFAULTS = LoadOptions()
