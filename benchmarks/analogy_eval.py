"""The Google analogy set: the engine's batch path against gensim's evaluate_word_analogies.

Run: .venv/bin/python -m benchmarks.analogy_eval
Both evaluate the same table with the same rules, in three alternating pairs in one run; the
script prints every pair's times and accuracies (they must agree) and the median speed-up.
"""

from __future__ import annotations

import logging
import statistics
import sys
import time
from pathlib import Path

import faiss
from gensim.models import KeyedVectors
from gensim.test.utils import datapath

from benchmarks.engine_throughput import blas_description
from harness.machine import machine
from service.config import default_table
from service.engine.analysis.evaluation import evaluate_analogies, read_questions
from service.engine.loaders import load_huggingface
from service.engine.search.cosine import CosineSearch

REPEATS = 3


def main() -> int:
    """Time both evaluations and compare their accuracy."""
    logging.disable(logging.INFO)
    table = load_huggingface(default_table().path)
    index = CosineSearch(table)
    vectors = KeyedVectors(vector_size=table.width)
    vectors.add_vectors(list(table.tokens), table.vectors.copy())
    path = Path(datapath("questions-words.txt"))
    print(f"command: python -m benchmarks.analogy_eval {' '.join(sys.argv[1:])}".rstrip())
    print(f"machine: {machine()}; faiss {faiss.__version__}; {blas_description()}")

    ratios, agree = [], True
    for attempt in range(1, REPEATS + 1):
        # Alternating pairs: both sides see the same state of a shared, noisy machine.
        started = time.perf_counter()
        ours = evaluate_analogies(index, read_questions(path.read_text(encoding="utf-8")))
        our_seconds = time.perf_counter() - started
        started = time.perf_counter()
        gensim_score, gensim_sections = vectors.evaluate_word_analogies(str(path))
        gensim_seconds = time.perf_counter() - started
        total = gensim_sections[-1]
        gensim_correct = len(total["correct"])
        gensim_answered = gensim_correct + len(total["incorrect"])
        agree = agree and ours.correct == gensim_correct and ours.answered == gensim_answered
        ratios.append(gensim_seconds / our_seconds)
        print(
            f"run {attempt}: engine {our_seconds:.2f} s, {ours.correct}/{ours.answered} correct; "
            f"gensim {gensim_seconds:.2f} s, {gensim_correct}/{gensim_answered} correct; "
            f"speed-up {ratios[-1]:.1f}x"
        )
    print(f"accuracy: engine {ours.accuracy:.4f}, gensim {gensim_score:.4f}")
    print(f"speed-up: median {statistics.median(ratios):.1f}x (runs: "
          f"{', '.join(f'{r:.1f}x' for r in ratios)})")  # fmt: skip
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
