"""Realistic request bodies for the hot path, shared by Locust, the wrk benchmarks and tests.

- Tokens are drawn Zipf-like over the vocabulary's whole-word entries, as real traffic asks
  for common words far more often than rare ones.
- Raw vectors are all distinct (Gaussian), so no cache can help.
- Analogies are questions from the Google analogy set shipped in gensim's test data.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np

from service.config import default_table
from service.engine.loaders import load_table
from service.engine.tables.table import EmbeddingTable

ZIPF_EXPONENT = 1.1
# BERT's vocabulary puts [PAD], [unusedN] and single characters before the whole words.
FIRST_WORD_ROW = 1996


def default_vocabulary() -> EmbeddingTable:
    """The default table, loaded the way the service loads it."""
    spec = default_table()
    return load_table(spec.path, spec.format)


def zipf_tokens(table: EmbeddingTable, count: int, seed: int = 0) -> list[str]:
    """`count` tokens with P(rank r) proportional to 1 / r^1.1 over whole-word rows."""
    words = [t for t in table.tokens[FIRST_WORD_ROW:] if t.isalpha()]
    weights = 1.0 / np.arange(1, len(words) + 1) ** ZIPF_EXPONENT
    rng = np.random.default_rng(seed)
    picks = rng.choice(len(words), size=count, p=weights / weights.sum())
    return [words[i] for i in picks]


def random_vectors(width: int, count: int, seed: int = 1) -> np.ndarray:
    """`count` distinct Gaussian vectors."""
    return np.random.default_rng(seed).normal(size=(count, width)).astype(np.float32)


def google_analogies(table: EmbeddingTable) -> list[tuple[str, str, str, str]]:
    """Distinct questions a:b :: c:d from gensim's questions-words.txt, lower-cased, all in the
    table (171 of the file's questions repeat another once lower-cased)."""
    from gensim.test.utils import datapath

    questions = []
    for line in Path(datapath("questions-words.txt")).read_text().splitlines():
        words = line.lower().split()
        if line.startswith(":") or len(words) != 4:
            continue
        if all(word in table.token_to_id for word in words):
            questions.append((words[0], words[1], words[2], words[3]))
    return list(dict.fromkeys(questions))


def neighbor_bodies(tokens: list[str], k: int = 10) -> list[str]:
    """JSON bodies for neighbours-by-token requests."""
    return [json.dumps({"token": token, "k": k}) for token in tokens]


def vector_bodies(vectors: np.ndarray, k: int = 10) -> list[str]:
    """JSON bodies for neighbours-by-vector requests."""
    return [json.dumps({"vector": vector.tolist(), "k": k}) for vector in vectors]


def vector_b64_bodies(vectors: np.ndarray, k: int = 10) -> list[str]:
    """JSON bodies for neighbours-by-vector requests, the vectors as base64 float32."""
    encoded = (base64.b64encode(vector.astype("<f4").tobytes()).decode() for vector in vectors)
    return [json.dumps({"vector_b64": text, "k": k}) for text in encoded]


def analogy_bodies(
    questions: list[tuple[str, str, str, str]], k: int = 10, rounds: int = 1
) -> list[str]:
    """Distinct JSON bodies for b - a + c analogy requests; each round asks for one more
    result, so no body repeats and a cache cannot answer one (a few questions share a, b, c
    and differ only in the expected answer; they make one body)."""
    bodies = (
        json.dumps({"positive": [b, c], "negative": [a], "k": k + extra})
        for extra in range(rounds)
        for a, b, c, _ in questions
    )
    return list(dict.fromkeys(bodies))
