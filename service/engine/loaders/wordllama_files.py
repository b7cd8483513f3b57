"""WordLlama's files, as the `wordllama` package installs them: a static embedding model.

    wordllama/weights/l2_supercat_256.safetensors          `embedding.weight`, rows x 256
    wordllama/tokenizers/l2_supercat_tokenizer_config.json  the tokenizer (Llama 2's)
    wordllama/config/train/l2_supercat.toml                 its Matryoshka widths

A table is served from the weights file; its tokenizer is found by the file's name
(`<config>_<width>.safetensors` -> `<config>_tokenizer_config.json`, in ../tokenizers/ as the
package lays them out, or beside the weights), and the widths the rows may be cut to from the
training configuration's `[matryoshka] dims` when it is there. The recipe (tables/embedding.py)
is WordLlama's embed: every piece (no truncation), their mean, not normalised. Binary weights
(`*_binary.safetensors`, packed bits) are refused. The rows are held row after row.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import replace
from pathlib import Path

from service.engine.errors import TableLoadError
from service.engine.files.reading import first_existing, read_text, require_file
from service.engine.loaders.huggingface import load_huggingface
from service.engine.loaders.options import DEFAULTS, LoadOptions
from service.engine.tables.embedding import HELD_BY, StaticEmbedding
from service.engine.tables.table import EmbeddingTable

TENSOR = "embedding.weight"
_NAME = re.compile(r"(?P<config>.+)_(?P<width>\d+)")


def configuration_name(path: Path) -> str | None:
    """`l2_supercat` for `l2_supercat_256.safetensors`; None for a name not WordLlama's."""
    named = _NAME.fullmatch(path.stem) if path.suffix == ".safetensors" else None
    return None if named is None else named.group("config")


def tokenizer_candidates(path: Path, config: str) -> list[Path]:
    """Where the weights' tokenizer may be: as the package lays it out, or beside them."""
    name = f"{config}_tokenizer_config.json"
    return [path.parent.parent / "tokenizers" / name, path.parent / name]


def is_wordllama(path: Path) -> bool:
    """Whether `path` is WordLlama weights: so named, with their tokenizer where it belongs."""
    config = configuration_name(path)
    if config is None or not path.is_file():
        return False
    return any(candidate.is_file() for candidate in tokenizer_candidates(path, config))


def load_wordllama(path: str | Path, options: LoadOptions = DEFAULTS) -> EmbeddingTable:
    """WordLlama weights as a table that embeds text as WordLlama's embed does."""
    path = Path(path)
    require_file(path)
    config = configuration_name(path)
    if config is None:
        raise TableLoadError(
            path, "not WordLlama's dense weights: expected a file named <config>_<width>"
            ".safetensors (binary weights are not served)"
        )  # fmt: skip
    if options.limit is not None:
        raise TableLoadError(path, "limit does not apply to a static model: its tokenizer "
                             "names every row")  # fmt: skip
    tokenizer = first_existing(path, tokenizer_candidates(path, config), "WordLlama tokenizer")
    table = load_huggingface(path, replace(options, vocab=tokenizer, tensor=TENSOR, layout=HELD_BY))
    widths = matryoshka_widths(path.parent.parent / "config" / "train" / f"{config}.toml")
    static = StaticEmbedding(
        library="wordllama",
        normalize=False,
        dimensions=tuple(sorted(width for width in widths if width <= table.width)),
    )
    return replace(table, static=static, checked=True)


def matryoshka_widths(path: Path) -> list[int]:
    """The widths WordLlama was trained to be cut to ([matryoshka] dims); none without the file."""
    if not path.is_file():
        return []
    try:
        dims = tomllib.loads(read_text(path)).get("matryoshka", {}).get("dims", [])
    except (tomllib.TOMLDecodeError, AttributeError):
        raise TableLoadError(path, "not a WordLlama training configuration (TOML)") from None
    if not isinstance(dims, list) or not all(
        isinstance(width, int) and not isinstance(width, bool) and width > 0 for width in dims
    ):
        raise TableLoadError(path, "[matryoshka] dims is not a list of positive widths")
    return dims
