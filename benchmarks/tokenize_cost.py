"""What /tokenize and text queries cost at their limits on MiniLM: time and answer size.

    .venv/bin/python -m benchmarks.tokenize_cost

Through the real app in-process (TestClient: validation, the runner, its worker thread, the
JSON answer), default settings (max_text_length 10,000 characters, max_batch 256), BLAS held
to one thread as served. Each case is the most the limits allow of one shape of text; a token
lookup of 256 rows is timed beside them for scale. Rerun under
`flock /tmp/embedding-bench.lock` on a shared machine.
"""

from __future__ import annotations

import statistics
import time

from fastapi.testclient import TestClient
from threadpoolctl import threadpool_limits

from harness.machine import machine
from service.api.app import create_app
from service.config import Settings, default_table

LIMIT = Settings().max_text_length
PROSE = (
    "Embeddings are lookup tables: a token's id selects a row, and the same table, applied in "
    "reverse, scores a vector against every row. Is running one row or two? Unbelievably, "
)


def prose(characters: int) -> str:
    return (PROSE * (characters // len(PROSE) + 1))[:characters]


CASES = {
    "tokenize: prose, 10,000 chars": ("tokenize", {"text": prose(LIMIT)}),
    "tokenize: punctuation, 10,000 chars (a piece and a word each)": (
        "tokenize",
        {"text": "!" * LIMIT},
    ),
    "tokenize: CJK, 10,000 chars (a piece and a word each)": ("tokenize", {"text": "日" * LIMIT}),
    "tokenize: one 10,000-char word ([UNK])": ("tokenize", {"text": "a" * LIMIT}),
    "tokenize: 256 texts of 39 chars": (
        "tokenize",
        {"texts": [prose(39)[:-1] + chr(97 + i % 26) for i in range(256)]},
    ),
    "tokenize: 256 pieces with vectors": (
        "tokenize",
        {"text": " ".join(["king"] * 256), "include_vector": True},
    ),
    "detokenize: 10,000 ids": ("tokenize", {"detokenize": [2332, 3035, 7861, 8270] * 2500}),
    "neighbors: mean of a 10,000-char text (k=10)": (
        "neighbors",
        {"text": prose(LIMIT), "pieces": "mean"},
    ),
    "neighbors: 256 mean-of-pieces queries, 39 chars each": (
        "neighbors",
        {
            "queries": [
                {"text": prose(39)[:-1] + chr(97 + i % 26), "pieces": "mean"} for i in range(256)
            ]
        },
    ),
    "reference: neighbors, 256 raw-vector queries": (
        "neighbors",
        {
            "queries": [
                {"vector": [((i * 7 + j) % 13) - 6.0 for j in range(384)]} for i in range(256)
            ]
        },
    ),
    "reference: lookup of 256 tokens": ("lookup", {"tokens": ["king"] * 256}),
}


def median_ms(client: TestClient, path: str, body: dict, runs: int = 7) -> tuple[float, int]:
    times, size = [], 0
    for _ in range(runs):
        started = time.perf_counter()
        response = client.post(path, json=body)
        times.append(time.perf_counter() - started)
        assert response.status_code == 200, response.text[:300]
        size = len(response.content)
    return statistics.median(times) * 1000, size


def main() -> None:
    print("command: python -m benchmarks.tokenize_cost")
    print(f"machine: {machine()}; BLAS limited to 1 thread; cache off")
    settings = Settings(tables=[default_table()], cache_bytes=0)
    with threadpool_limits(1), TestClient(create_app(settings)) as client:
        reference = None
        rows = []
        for name, (operation, body) in reversed(CASES.items()):
            ms, size = median_ms(client, f"/v1/tables/minilm/{operation}", body)
            reference = reference or ms
            rows.append((name, ms, size))
        for name, ms, size in reversed(rows):
            print(f"{name}: {ms:.1f} ms ({ms / reference:.1f}x the lookup), {size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
