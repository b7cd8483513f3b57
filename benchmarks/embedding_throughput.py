"""Texts per second of /v1/embeddings against the models' own libraries, side by side in one run.

    flock /tmp/embedding-bench.lock .venv/bin/python -m benchmarks.embedding_throughput

Two static models on sentences of gensim's Lee corpus: the default, WordLlama's l2_supercat
(32,000 x 256), and a Model2Vec model written by model2vec's own StaticModel.save_pretrained
from MiniLM's whole table and tokenizer (30,522 x 384, normalised, as the potion models are):

1. each library in-process on one core: WordLlama's `embed` and Model2Vec's `encode` on
   batches of 64, each in a child process pinned to one CPU (os.sched_setaffinity), the
   tokenizer's threads held to one;
2. the service over HTTP, `python -m service serve` as the README starts it plus the Model2Vec
   folder (default settings), with wrk (2 threads) on the same 2 cores: GET /healthz, then per
   model single-text POST /v1/embeddings at 32 connections and batches of 64 texts;
3. the worst cases the settings allow (docs/operations.md), on WordLlama (which reads every
   character): one request of max_embedding_inputs texts of max_embedding_text_length
   characters each, one of as many lists of ids as a body may hold, one longest text.

Goals: batches of 64 over HTTP at least 0.5x the library's texts per second; single-text
requests at least 40% of /healthz's requests per second on the same server.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import shutil
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import numpy as np

from harness.machine import machine
from harness.server import forget, start_server
from harness.wrk import WrkResult, run_wrk
from service.config import Settings, TableSpec, default_static_table, default_table
from service.engine.loaders import load_table

CONNECTIONS = 32
BATCH = 64
EMBEDDINGS = "/v1/embeddings"


def sentences() -> list[str]:
    """Gensim's Lee corpus (its test data) cut into sentences: 10 words and more each."""
    from gensim.test.utils import datapath

    text = Path(datapath("lee_background.cor")).read_text(encoding="utf-8")
    cut = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text)]
    return [s for s in cut if len(s.split()) >= 10]


def library_rate(model: str, folder: Path, texts: list[str], seconds: float) -> float:
    """The model's own library, texts per second in batches of 64, in a child process on one
    core; `model` is "wordllama" or "model2vec" (a folder save_pretrained wrote)."""
    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:
        return float(pool.apply(_library_rate, (model, folder, texts, seconds)))


def _library_rate(model: str, folder: Path, texts: list[str], seconds: float) -> float:
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    os.environ["RAYON_NUM_THREADS"] = "1"  # the tokenizer's own thread pool
    encode = _wordllama() if model == "wordllama" else _model2vec(folder)
    batches = [texts[i : i + BATCH] for i in range(0, len(texts) - BATCH + 1, BATCH)]
    encode(batches[0])  # warm
    done, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        for batch in batches:
            encode(batch)
            done += len(batch)
    return done / (time.perf_counter() - started)


def _wordllama() -> Callable[[list[str]], object]:
    from wordllama import WordLlama

    weights = default_static_table().path
    assert weights is not None
    with tempfile.TemporaryDirectory() as cache:
        # WordLlama looks for its tokenizer in the package's tokenizer/ folder, but the wheel
        # ships it in tokenizers/: its cache folder is where it looks next.
        tokenizers = Path(cache) / "tokenizers"
        tokenizers.mkdir()
        shutil.copy(
            weights.parent.parent / "tokenizers/l2_supercat_tokenizer_config.json", tokenizers
        )
        model = WordLlama.load(cache_dir=cache, disable_download=True)
    return lambda batch: model.embed(batch, batch_size=BATCH)


def _model2vec(folder: Path) -> Callable[[list[str]], object]:
    from model2vec import StaticModel

    model = StaticModel.from_pretrained(folder)
    return lambda batch: model.encode(batch, use_multiprocessing=False)


def model2vec_folder(folder: Path) -> Path:
    """MiniLM's table and tokenizer as a Model2Vec model, written by model2vec itself."""
    from model2vec import StaticModel
    from tokenizers import Tokenizer

    spec = default_table()
    assert spec.path is not None
    table = load_table(spec.path)
    tokenizer = Tokenizer.from_file(str(spec.path / "tokenizer.json"))
    vectors = np.ascontiguousarray(table.vectors, dtype=np.float32)
    StaticModel(vectors, tokenizer, normalize=True).save_pretrained(folder)
    return folder


def bodies(model: str, texts: list[str], per_request: int) -> list[str]:
    """/v1/embeddings bodies of `per_request` texts each, every text used in turn."""
    count = max(1, len(texts) // per_request) * 4
    out = []
    for request in range(count):
        start = (request * per_request) % len(texts)
        chunk = (texts * 2)[start : start + per_request]
        one = chunk[0] if per_request == 1 else chunk
        out.append(json.dumps({"model": model, "input": one}))
    return out


def line(name: str, result: WrkResult, texts: int = 1) -> str:
    return (
        f"  {name:<34} {result.requests_per_second:>9,.0f} req/s  "
        f"{result.requests_per_second * texts:>9,.0f} texts/s  p50 {result.p50_ms:6.2f} ms  "
        f"p99 {result.p99_ms:7.2f} ms  failures {result.failures}"
    )


def peak_resident_mb(pid: int) -> float:
    """The process's peak resident memory so far (VmHWM), in MB."""
    status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    found = re.search(r"^VmHWM:\s+(\d+) kB", status, re.M)
    return int(found.group(1)) / 1024 if found else float("nan")


def worst_cases(base: str) -> list[str]:
    """One request at the limits: the most inputs, each the longest text; as many lists of the
    most ids as max_body_values lets one body hold; one longest text alone."""
    settings = Settings()
    inputs, longest = settings.max_embedding_inputs, settings.max_embedding_text_length
    prose = " ".join(sentences())
    texts = [(prose[i * 97 :] + prose)[:longest] for i in range(inputs)]
    lists = min(inputs, settings.max_body_values // (longest + 1) - 1)
    ids = [[(i * 31 + j) % 32000 for j in range(longest)] for i in range(lists)]
    cases = {
        f"{inputs} texts of {longest:,} characters": texts,
        f"{lists} lists of {longest:,} token ids": ids,
        f"1 text of {longest:,} characters": texts[0],
    }
    return [_timed(base, name, given) for name, given in cases.items()]


def _timed(base: str, name: str, given: object) -> str:
    """The best of three of one request, with its body's and answer's sizes."""
    body = json.dumps({"model": "wordllama", "input": given}).encode()
    request = urllib.request.Request(base + EMBEDDINGS, body, {"content-type": "application/json"})
    times, size = [], 0
    for _ in range(3):
        started = time.perf_counter()
        with urllib.request.urlopen(request, timeout=120) as response:
            size = len(response.read())
        times.append(time.perf_counter() - started)
    return (
        f"  {name:<34} body {len(body) / 1e6:5.2f} MB  best of 3 {min(times) * 1000:7.0f} ms"
        f"  answer {size / 1e6:5.2f} MB"
    )


def served(base: str, model: str, texts: list[str], seconds: int) -> tuple[WrkResult, WrkResult]:
    """One text a request, then batches of 64, at 32 connections: (single, batches)."""
    run_wrk(base + EMBEDDINGS, CONNECTIONS, 2, bodies(model, texts, 1))  # warm-up
    single = run_wrk(base + EMBEDDINGS, CONNECTIONS, seconds, bodies(model, texts, 1))
    print(line(f"{model}: 1 text a request", single))
    batches = run_wrk(base + EMBEDDINGS, CONNECTIONS, seconds, bodies(model, texts, BATCH))
    print(line(f"{model}: {BATCH} texts a request", batches, BATCH))
    return single, batches


def main() -> None:
    """Measure the libraries, then the server, and print both and their ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=8, help="length of each wrk run")
    parser.add_argument(
        "--routed",
        action="store_true",
        help="serve with direct_queries off: FastAPI's routes answer (the direct path's A/B)",
    )
    args = parser.parse_args()
    print(f"command: python -m benchmarks.embedding_throughput {' '.join(sys.argv[1:])}".rstrip())
    print(f"machine: {machine()}")
    texts = sentences()
    mean = sum(map(len, texts)) / len(texts)
    print(f"texts: {len(texts):,} Lee corpus sentences, {mean:.0f} characters on average")
    with tempfile.TemporaryDirectory() as work:
        folder = model2vec_folder(Path(work) / "m2v")
        libraries = {
            "wordllama": library_rate("wordllama", folder, texts, args.seconds),
            "m2v": library_rate("model2vec", folder, texts, args.seconds),
        }
        for model, rate in libraries.items():
            library = "WordLlama embed" if model == "wordllama" else "Model2Vec encode"
            print(f"  {library + ', 1 core':<34} {rate:>21,.0f} texts/s (batches of {BATCH})")
        tables = [default_table(), default_static_table(), TableSpec(name="m2v", path=folder)]
        env = {"EMBEDDING_SERVICE_TABLES": json.dumps([t.model_dump(mode="json") for t in tables])}
        if args.routed:
            env["EMBEDDING_SERVICE_DIRECT_QUERIES"] = "false"
        process, base = start_server(env)
        try:
            health = run_wrk(base + "/healthz", CONNECTIONS, args.seconds)
            print(line(f"GET /healthz c={CONNECTIONS}", health))
            results = {model: served(base, model, texts, args.seconds) for model in libraries}
            before = peak_resident_mb(process.pid)
            print("worst cases (one request at a time, default settings, wordllama):")
            for worst in worst_cases(base):
                print(worst)
            print(
                f"  server peak resident {before:,.0f} MB before them, "
                f"{peak_resident_mb(process.pid):,.0f} MB after"
            )
        finally:
            process.terminate()
            process.wait(timeout=30)
            forget(process)
    for model, (single, batches) in results.items():
        batched = batches.requests_per_second * BATCH / libraries[model]
        alone = single.requests_per_second / health.requests_per_second
        print(
            f"{model}: batches of {BATCH} over HTTP / library in-process: {batched:.2f}x "
            f"(goal >= 0.5x); single-text req/s / /healthz req/s: {alone:.0%} (goal >= 40%)"
        )


if __name__ == "__main__":
    main()
