"""Static embedding models for the tests, each with its own library as the oracle.

A Model2Vec folder is written by model2vec's own `StaticModel(...).save_pretrained`, from a
slice of MiniLM's table and tokenizer (the first ROWS tokens: words past them are unknown
pieces, which Model2Vec drops); no torch anywhere. WordLlama is the `wordllama` package's own
l2_supercat 256-d model, and its oracle the library's own `WordLlama.load(...).embed`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
from gensim.test.utils import datapath
from tokenizers import Tokenizer

from service.config import default_static_table, default_table
from service.engine.loaders import load_huggingface

# MiniLM's rows kept: its special tokens, unused rows, characters and the commonest words.
ROWS = 8000
# The edge cases beside the Lee corpus's lines: a text far past any max_length, unicode,
# whitespace only, runs of spaces, words the slice does not know, and the empty text.
EDGE_TEXTS = [
    "the quick brown fox " * 100,  # 2,000 characters
    "naïve café ☕ 日本語 Ελληνικά émigré",
    " ",
    "\t\n  \u3000 ",
    "  two   spaces  ",
    "xylophonist zzqqx 🦜",
    "a",
    "",
]


def lee_lines(count: int = 200) -> list[str]:
    """The first `count` lines of gensim's Lee corpus (its test data)."""
    with open(datapath("lee_background.cor"), encoding="utf-8") as corpus:
        return [line.strip() for _, line in zip(range(count), corpus, strict=False)]


def texts() -> list[str]:
    """What every static model is held to: 200 lines of the Lee corpus and the edge cases."""
    return [*lee_lines(), *EDGE_TEXTS]


def minilm_slice(rows: int = ROWS) -> tuple[np.ndarray, Tokenizer]:
    """MiniLM's first `rows` rows and its tokenizer cut to the same tokens."""
    path = default_table().path
    assert path is not None
    table = load_huggingface(path)
    data = json.loads((path / "tokenizer.json").read_text(encoding="utf-8"))
    data["model"]["vocab"] = {t: i for t, i in data["model"]["vocab"].items() if i < rows}
    data["added_tokens"] = [token for token in data["added_tokens"] if token["id"] < rows]
    vectors = np.ascontiguousarray(table.vectors[:rows], dtype=np.float32)
    return vectors, Tokenizer.from_str(json.dumps(data))


def model2vec_folder(folder: Path, **options: Any) -> Path:
    """A Model2Vec folder written by model2vec itself: StaticModel(**options).save_pretrained.
    `weights=True` gives it per-token weights (seeded, 0.2 to 2)."""
    from model2vec import StaticModel

    vectors, tokenizer = minilm_slice()
    if options.pop("weights", False):
        weights = np.random.default_rng(1).uniform(0.2, 2.0, len(vectors))
        options["weights"] = weights.astype(np.float32)
    StaticModel(vectors, tokenizer, **options).save_pretrained(folder)
    return folder


def model2vec_oracle(folder: Path) -> Any:
    """Model2Vec's own model, loaded from the folder as a user would."""
    from model2vec import StaticModel

    return StaticModel.from_pretrained(folder)


def wordllama_weights() -> Path:
    """The l2_supercat 256-d weights inside the wordllama package (the default static table)."""
    path = default_static_table().path
    assert path is not None
    return path


def wordllama_oracle(cache: Path, trunc_dim: int | None = None) -> Any:
    """WordLlama's own inference object, loaded by WordLlama.load with downloads off.

    WordLlama looks for its tokenizer in the package's `tokenizer/` folder, but the wheel ships
    it in `tokenizers/` (0.4.0.post1), so the library would download it; it is put in the
    library's cache folder instead, where WordLlama.load looks next.
    """
    from wordllama import WordLlama

    weights = wordllama_weights()
    tokenizer = weights.parent.parent / "tokenizers" / "l2_supercat_tokenizer_config.json"
    (cache / "tokenizers").mkdir(parents=True, exist_ok=True)
    shutil.copy(tokenizer, cache / "tokenizers" / tokenizer.name)
    return WordLlama.load(cache_dir=cache, trunc_dim=trunc_dim, disable_download=True)
