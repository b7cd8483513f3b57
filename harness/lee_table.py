"""A projector-format table with a real count column, for the explorer's screenshots and tests.

The words of gensim's test corpus `lee_background.cor` (the Lee background corpus: 300 short
Australian news articles; 58,152 words after gensim's simple_preprocess) that occur at least
MIN_COUNT times and are whole tokens of MiniLM's vocabulary, most frequent first: 1,657 words,
each with its MiniLM token embedding (384 float32s) in the .bytes file and its real corpus count
in the labels .tsv (`word<TAB>count`, the TensorFlow Embedding Projector's metadata format).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from gensim.test.utils import datapath
from gensim.utils import simple_preprocess

from service.config import default_table
from service.engine.loaders import load_huggingface

MIN_COUNT = 5
CORPUS = "lee_background.cor"


def corpus_counts() -> Counter[str]:
    """Word counts of the Lee background corpus, tokenised by gensim's simple_preprocess."""
    with open(datapath(CORPUS), encoding="utf-8") as corpus:
        return Counter(word for line in corpus for word in simple_preprocess(line))


def write_lee_table(folder: Path, min_count: int = MIN_COUNT) -> Path:
    """Write lee.bytes + lee.tsv into `folder`; the path of the .bytes file."""
    spec = default_table()
    minilm = load_huggingface(spec.path)
    kept = [(w, n) for w, n in corpus_counts().most_common() if n >= min_count]
    kept = [(word, count) for word, count in kept if word in minilm.token_to_id]
    rows = [minilm.token_to_id[word] for word, _ in kept]
    folder.mkdir(parents=True, exist_ok=True)
    minilm.vectors[rows].astype("<f4").tofile(folder / "lee.bytes")
    labels = ["word\tcount", *(f"{word}\t{count}" for word, count in kept)]
    (folder / "lee.tsv").write_text("\n".join(labels) + "\n", encoding="utf-8")
    return folder / "lee.bytes"
