"""The worst /score request on a Llama-3-8B-shaped table: 128,256 x 4,096, untied.

    flock /tmp/embedding-bench.lock .venv/bin/python -m benchmarks.worst_score_llama [--runs 3]

Writes a model folder shaped as Llama 3 8B's tables (bfloat16, two shards behind
model.safetensors.index.json, lm_head in the second, config.json untied; random rows, as only
the shapes matter for time and memory) into a temporary folder, serves it with the default
settings, and measures the most expensive /score the limits allow (k = max_k, softmax, a
target) as benchmarks/worst_case.py measures every operation: in-process, the server's side
only, median of --runs after a warm-up, the peak of memory allocated while answering.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import safetensors

from benchmarks.worst_case import Driver, measure
from harness.machine import machine
from service.api.app import create_app
from service.config import Settings, TableSpec
from service.loading.tables import load_registry

ROWS, WIDTH = 128_256, 4_096
SHARDS = {
    "model-00001-of-00002.safetensors": "model.embed_tokens.weight",
    "model-00002-of-00002.safetensors": "lm_head.weight",
}


def write_folder(folder: Path) -> None:
    """The folder: two bfloat16 tables, their index, config.json, a WordLevel tokenizer."""
    rng = np.random.default_rng(0)
    for shard, name in SHARDS.items():
        bits = np.empty((ROWS, WIDTH), dtype="<u2")
        for first in range(0, ROWS, 8192):
            block = rng.normal(scale=0.02, size=(min(8192, ROWS - first), WIDTH))
            bits[first : first + 8192] = block.astype(np.float32).view(np.uint32) >> 16
        spec = safetensors.TensorSpec(
            dtype="bfloat16", shape=[ROWS, WIDTH], data_ptr=bits.ctypes.data, data_len=bits.nbytes
        )
        (folder / shard).write_bytes(safetensors.serialize({name: spec}))
        del bits
    weight_map = {name: shard for shard, name in SHARDS.items()}
    index = {"metadata": {}, "weight_map": weight_map}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index), encoding="utf-8")
    config = {"vocab_size": ROWS, "hidden_size": WIDTH, "tie_word_embeddings": False}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (folder / "vocab.txt").write_text("".join(f"t{i}\n" for i in range(ROWS)), encoding="utf-8")


async def run(folder: Path, runs: int) -> None:
    settings = Settings(tables=[TableSpec(name="llama", path=folder)])
    started = time.perf_counter()
    registry = load_registry(settings)
    table = registry.get("llama").table
    print(
        f"loaded {table.rows:,} x {table.width:,} (untied) in {time.perf_counter() - started:.1f} s"
    )
    app = create_app(settings, registry)
    vector = np.random.default_rng(1).normal(size=WIDTH).astype("<f4")
    body = {
        "vector_b64": base64.b64encode(vector.tobytes()).decode(),
        "k": settings.max_k,
        "softmax": True,
        "target": "t7",
    }
    data = json.dumps(body).encode()
    async with app.router.lifespan_context(app):
        seconds, peak, size = await measure(Driver(app, "/v1/tables/llama"), "score", data, runs)
    print(
        f"score: k={settings.max_k}, softmax, target: {seconds * 1000:.0f} ms, "
        f"peak {peak / 2**20:.1f} MB, answer {size / 2**20:.2f} MB"
    )
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"process peak resident memory: {peak_rss:.2f} GB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"command: python -m benchmarks.worst_score_llama {' '.join(sys.argv[1:])}".rstrip())
    print(f"machine: {machine()}, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as folder:
        write_folder(Path(folder))
        asyncio.run(run(Path(folder), args.runs))


if __name__ == "__main__":
    main()
