"""The diagnostics measured: how well the suspects find held-out unused rows, the count
figures of a projector table, what the diagnostics cost, and the endpoints' worst cases.

    flock /tmp/embedding-bench.lock .venv/bin/python -m benchmarks.diagnostics_report

In-process, BLAS held to one thread as the service runs it (compute_threads=1):

1. MiniLM, reference rows = the even [unusedN] (497), held out = the odd ones (497). Both
   indicators rank the same candidates (every non-zero row but the reference rows), and the
   2% most suspect are scored against the held-out rows: precision and recall. Scoring the
   reference rows themselves would be circular, so they are never ranked.
2. The Lee projector table (harness/lee_table.py; a real `count` column): the report
   /diagnostics gives, with the Spearman figures.
3. Time of the default diagnostics (first component, default pattern, ranking) for MiniLM and
   for an in-memory 1,000,000 x 300 table, with the peak memory numpy allocates meanwhile.
4. The most expensive requests the default limits allow: a caller's own pattern with
   limit=1000 on both tables, and /evaluate with all 19,544 Google analogy questions on MiniLM.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from harness.lee_table import write_lee_table
from harness.machine import machine
from service.config import Settings, default_table
from service.engine.analysis.diagnostics import TableDiagnostics
from service.engine.analysis.indicators import rank, reference_cosines
from service.engine.analysis.references import matching_rows
from service.engine.loaders import load_huggingface, load_projector
from service.engine.search.store import RowStore
from service.engine.served import ServedTable
from service.engine.tables.table import EmbeddingTable
from service.loading.registry import Registry
from service.operations.answers import dumps
from service.operations.diagnostics import diagnostics_answer, evaluation_answer
from service.operations.limits import Limits
from service.schemas.diagnostics import DiagnosticsRequest, EvaluateRequest

FRACTION = 0.02
REPEATS = 3
EVEN, ODD = r"^\[unused\d*[02468]\]$", r"^\[unused\d*[13579]\]$"
LIMITS = Limits(Settings())


def held_out_scores(table: EmbeddingTable) -> None:
    """Precision and recall of the 2% suspects against the odd [unusedN], both indicators."""
    diagnostics = TableDiagnostics(table, RowStore.of(table))
    store = diagnostics.store
    even, odd = matching_rows(table.tokens, EVEN), matching_rows(table.tokens, ODD)
    candidates = np.setdiff1d(store.indexed, even)
    cosines = reference_cosines(table.vectors, store.norms64, diagnostics.component(), even)
    rankings = {
        "reference cosine (even [unusedN] as reference)": rank(
            "reference_cosine", "", cosines, candidates, even
        ),
        "low norm (no reference)": rank("norm", "", store.norms64, candidates, even),
    }
    print(f"\n## 1. MiniLM: {even.size} reference rows, {odd.size} held out, "
          f"{candidates.size} ranked, suspects = {FRACTION:.0%}")  # fmt: skip
    print("| indicator | suspects | held-out found | precision | recall |")
    print("|---|---:|---:|---:|---:|")
    for name, ranking in rankings.items():
        suspects = ranking.suspects(FRACTION)
        found = np.isin(suspects, odd).sum()
        print(f"| {name} | {suspects.size} | {found} | {found / suspects.size:.3f} | "
              f"{found / odd.size:.3f} |")  # fmt: skip
    flagged(table, rankings["reference cosine (even [unusedN] as reference)"], odd)


def flagged(table: EmbeddingTable, ranking: Any, odd: np.ndarray) -> None:
    """The suspects that are not [unusedN] rows, by kind, and the first of them."""
    others = [r for r in ranking.suspects(FRACTION).tolist() if r not in set(odd.tolist())]
    tokens = [table.tokens[r] for r in others]
    pieces = sum(t.startswith("##") for t in tokens)
    single = sum(len(t) == 1 for t in tokens)
    print(f"\nNon-[unused] suspects under the reference cosine: {len(tokens)}: {pieces} word "
          f"pieces (##...), {single} single characters, {len(tokens) - pieces - single} "
          "other")  # fmt: skip
    print("first 40: " + " ".join(tokens[:40]))


def lee_report() -> None:
    """The /diagnostics answer on the Lee projector table, summarised."""
    with tempfile.TemporaryDirectory() as folder:
        path = write_lee_table(Path(folder))
        served = serve(lambda: load_projector(path))
    answer = diagnostics_answer(served, LIMITS, DiagnosticsRequest(limit=15))
    counts = answer["counts"]
    print(f"\n## 2. Lee projector table: {answer['rows']} rows, indicator "
          f"{answer['indicator']['name']}: {answer['indicator']['why']}")  # fmt: skip
    for name in ("spearman_norm", "spearman_indicator"):
        figure = counts.get(name)
        if figure:
            print(f"{name}: rho {figure['rho']:.3f} (p {figure['p_value']:.2g}, n {figure['n']})")
    print("norm quartiles by count decile (rare first):")
    for b in counts["bins"]:
        quartiles = ", ".join(f"{q:.3f}" for q in b["norm_quartiles"])
        print(f"  counts {b['low']:.0f}-{b['high']:.0f} ({b['rows']} rows): {quartiles}")
    suspects = ", ".join(
        f"{s['token']} ({s['count']}, {s['norm']:.3f})" for s in answer["suspects"]
    )
    print(f"first suspects (count, norm): {suspects}")


def serve(loader: Callable[[], EmbeddingTable], name: str = "t") -> ServedTable:
    """A table loaded and indexed as the service does, without warming its diagnostics."""
    return Registry().load(name, loader)


def synthetic(rows: int = 1_000_000, width: int = 300, seed: int = 0) -> EmbeddingTable:
    """Gaussian rows with 1,000 alike [unusedN] rows and 2,000 short rows, shuffled in."""
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((rows, width), dtype=np.float32)
    chosen = rng.choice(rows, 3_000, replace=False)
    unused, rare = chosen[:1000], chosen[1000:]
    vectors[unused] = 0.3 + rng.standard_normal((1000, width), dtype=np.float32) * 0.02
    vectors[rare] *= 0.1
    tokens = [f"w{i}" for i in range(rows)]
    for n, row in enumerate(unused.tolist()):
        tokens[row] = f"[unused{n}]"
    return EmbeddingTable(tokens, vectors)


def timed(work: Callable[[], Any]) -> tuple[float, Any]:
    """(seconds, result) of one call."""
    started = time.perf_counter()
    result = work()
    return time.perf_counter() - started, result


def peak_memory(work: Callable[[], Any]) -> float:
    """MB of the peak numpy and Python allocate during one call (traced apart from the timed
    runs: tracing slows Python code down several times)."""
    tracemalloc.start()
    work()
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return peak


def costs(name: str, loader: Callable[[], EmbeddingTable], pattern: str) -> ServedTable:
    """Time of the default diagnostics (fresh each run) and of a caller's own pattern."""
    served = serve(loader, name)
    store = served.search.store

    def fresh() -> Any:
        return TableDiagnostics(served.table, store).warm()

    seconds = [timed(fresh)[0] for _ in range(REPEATS)]
    print(f"\n{name} ({served.table.rows:,} x {served.table.width}): default diagnostics "
          f"{statistics.median(seconds):.2f} s median ({', '.join(f'{s:.2f}' for s in seconds)})"
          f"; peak memory {peak_memory(fresh):.0f} MB; indicator "
          f"{fresh().ranking.indicator}")  # fmt: skip
    served.diagnostics.component()  # computed once per load, timed above
    body = DiagnosticsRequest(reference={"pattern": pattern}, limit=1000)

    def own_pattern() -> bytes:
        # A new pattern each time: the last two are cached with the table.
        served.diagnostics._custom.clear()
        return dumps(diagnostics_answer(served, LIMITS, body))

    for attempt in range(2):
        took, answer = timed(own_pattern)
        print(f"  own pattern {pattern!r}, limit 1000 (run {attempt + 1}): {took:.2f} s, "
              f"answer {len(answer) / 1e6:.2f} MB")  # fmt: skip
    print(f"  its peak memory: {peak_memory(own_pattern):.0f} MB")
    return served


def evaluate_cost(served: ServedTable) -> None:
    """The whole Google analogy set through /evaluate's answer function."""
    # A new restrict past the rows each run: the same figures, computed anew rather than
    # answered from the evaluation kept with the load (builtin_evaluations_kept).
    restricts = iter(range(300_000, 0, -1))

    def run() -> Any:
        body = EvaluateRequest(builtin="questions-words", restrict=next(restricts))
        return evaluation_answer(served, LIMITS, body)

    for attempt in range(2):
        seconds, answer = timed(run)
        total = answer["total"]
        print(f"  /evaluate questions-words (run {attempt + 1}): {seconds:.2f} s, "
              f"{total['correct']}/{total['correct'] + total['incorrect']} correct, "
              f"{answer['oov']} out of vocabulary")  # fmt: skip
    kept = EvaluateRequest(builtin="questions-words", restrict=300_000)
    seconds, _ = timed(lambda: evaluation_answer(served, LIMITS, kept))
    print(f"  the same, answered from the kept evaluation: {seconds * 1000:.1f} ms")
    print(f"  its peak memory: {peak_memory(run):.0f} MB")
    words = [t for t in served.table.tokens[2000:] if t.isalpha()]
    most = LIMITS.settings.max_evaluation_questions
    picks = np.random.default_rng(0).choice(len(words), size=(most, 4))
    text = ": worst\n" + "".join(" ".join(words[i] for i in row) + "\n" for row in picks)
    worst = EvaluateRequest(analogies=text)
    seconds, answer = timed(lambda: evaluation_answer(served, LIMITS, worst))
    print(f"  /evaluate {answer['questions']:,} questions, all in vocabulary (the most allowed; "
          f"{len(text.encode()) / 1e6:.2f} MB of body): {seconds:.2f} s")  # fmt: skip


def main() -> int:
    """Print every measurement, with the command and the machine."""
    print(f"command: python -m benchmarks.diagnostics_report {' '.join(sys.argv[1:])}".rstrip())
    print(f"machine: {machine()}; BLAS held to 1 thread")
    with threadpool_limits(1):
        minilm = load_huggingface(default_table().path)
        held_out_scores(minilm)
        lee_report()
        print("\n## 3-4. Cost")
        served = costs("MiniLM", lambda: minilm, r"^##.*\d$")
        evaluate_cost(served)
        costs("synthetic", synthetic, r"^w\d*7$")
    return 0


if __name__ == "__main__":
    sys.exit(main())
