"""The Google analogy set: the engine's batch path against gensim's evaluate_word_analogies.

Run: .venv/bin/python -m benchmarks.analogy_eval
Both evaluate the same table with the same rules in the same run; the script prints both
accuracies (they must agree) and both wall times.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path

import faiss
from gensim.models import KeyedVectors
from gensim.test.utils import datapath

from benchmarks.engine_throughput import blas_description
from service.config import default_table
from service.engine.evaluation import evaluate_analogies
from service.engine.index import SimilarityIndex
from service.engine.loaders import load_huggingface


def main() -> int:
    """Time both evaluations and compare their accuracy."""
    logging.disable(logging.INFO)
    table = load_huggingface(default_table().path)
    index = SimilarityIndex(table)
    vectors = KeyedVectors(vector_size=table.width)
    vectors.add_vectors(list(table.tokens), table.vectors.copy())
    path = Path(datapath("questions-words.txt"))
    print(f"command: python -m benchmarks.analogy_eval {' '.join(sys.argv[1:])}".rstrip())
    print(f"machine: {os.cpu_count()} cores; faiss {faiss.__version__}; {blas_description()}")

    started = time.perf_counter()
    ours = evaluate_analogies(index, path)
    our_seconds = time.perf_counter() - started
    started = time.perf_counter()
    gensim_score, gensim_sections = vectors.evaluate_word_analogies(str(path))
    gensim_seconds = time.perf_counter() - started

    total = gensim_sections[-1]
    gensim_correct = len(total["correct"])
    gensim_answered = gensim_correct + len(total["incorrect"])
    print(f"questions evaluated: engine {ours.answered}, gensim {gensim_answered}")
    print(f"correct: engine {ours.correct}, gensim {gensim_correct}")
    print(f"accuracy: engine {ours.accuracy:.4f}, gensim {gensim_score:.4f}")
    print(f"seconds: engine {our_seconds:.2f}, gensim {gensim_seconds:.2f}")
    print(f"speed-up: {gensim_seconds / our_seconds:.1f}x")
    return 0 if ours.correct == gensim_correct else 1


if __name__ == "__main__":
    sys.exit(main())
