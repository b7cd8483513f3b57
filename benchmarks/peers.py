"""Exact vector neighbours over HTTP beside a peer: Chroma, side by side in one run.

Run (wrk from Debian; Chroma is installed into its own venv on first use, from PyPI):
    .venv/bin/python -m benchmarks.peers [--rounds 3] [--seconds 10] [--workers 1 2]
        [--chroma-venv DIR]

Both servers hold the whole default table (30,522 x 384 MiniLM rows; Chroma as a collection
with cosine distance, its default HNSW index) and answer the same 2,000 distinct queries: MiniLM
rows with Gaussian noise (a tenth of the row's norm), so every query is new to the service's
answer cache (which keeps only token queries anyway) and none is a stored row. Each round runs
wrk -t1 -c32 for --seconds against each server, alternating which goes first; the servers'
CPU time per request (user + system of the process and its threads, from /proc; with several
workers, the supervisor's and every worker's) is printed beside throughput. `--workers 1 2`
runs the service once with each number of worker processes, side by side in the same rounds.
Chroma's answers are approximate: their recall@10 against the service's exact answers is
measured on the same queries and printed. For each service run, the batch sizes its search
batcher formed (the `batch_size` histogram of /metrics, read before and after the run) are
printed too: the batch sizes the exact pass is chosen for (docs/exact-pass.md).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
from prometheus_client.parser import text_string_to_metric_families

from harness.machine import machine
from harness.processes import child_pids, cpu_seconds
from harness.server import free_port, start_server
from harness.workloads import default_vocabulary
from harness.wrk import WrkResult, run_wrk

CHROMA = "chromadb==1.5.9"
COLLECTIONS = "/api/v2/tenants/default_tenant/databases/default_database/collections"
NEIGHBORS = "/v1/tables/minilm/neighbors"
QUERIES = 2_000
NOISE = 0.1
K = 10
CONNECTIONS = 32
# Chroma's largest add() batch is a little over 5,000 embeddings.
ADD_BATCH = 5_000

LOAD_SCRIPT = """
import sys, numpy as np, chromadb
path, rows_file, batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = np.load(rows_file)
client = chromadb.PersistentClient(path=path)
collection = client.create_collection("minilm", metadata={"hnsw:space": "cosine"})
for start in range(0, len(rows), batch):
    part = rows[start:start + batch]
    collection.add(ids=[str(i) for i in range(start, start + len(part))], embeddings=part)
print(collection.count())
"""


def chroma_python(venv: Path) -> Path:
    """The Chroma venv's python, creating the venv and installing Chroma when it has none."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", CHROMA], check=True)
    return python


def noisy_rows(rows: np.ndarray, count: int, seed: int = 0) -> np.ndarray:
    """`count` distinct non-zero rows, each plus Gaussian noise of a tenth of its norm."""
    rng = np.random.default_rng(seed)
    norms = np.linalg.norm(rows, axis=1)
    picks = rng.choice(np.flatnonzero(norms > 0), size=count, replace=False)
    noise = rng.normal(size=(count, rows.shape[1])) / np.sqrt(rows.shape[1])
    return (rows[picks] + NOISE * norms[picks, None] * noise).astype(np.float32)


def post(url: str, body: dict) -> dict:  # type: ignore[type-arg]
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())  # type: ignore[no-any-return]


def wait_for(url: str, process: subprocess.Popen[bytes], seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args} exited with {process.returncode}")
        with contextlib.suppress(OSError):
            urllib.request.urlopen(url, timeout=2).close()
            return
        time.sleep(0.5)
    raise RuntimeError(f"{url} not ready after {seconds} s")


def start_chroma(
    python: Path, folder: Path, rows: np.ndarray
) -> tuple[subprocess.Popen[bytes], str]:
    """A Chroma server over a persistent folder holding every row: (process, collection URL)."""
    rows_file = folder / "rows.npy"
    np.save(rows_file, rows)
    store = folder / "chroma"
    loaded = subprocess.run(
        [str(python), "-c", LOAD_SCRIPT, str(store), str(rows_file), str(ADD_BATCH)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert int(loaded.stdout.split()[-1]) == len(rows), loaded.stdout
    port = free_port()
    chroma = python.parent / "chroma"
    process = subprocess.Popen(
        [str(chroma), "run", "--path", str(store), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    wait_for(base + "/api/v2/heartbeat", process)
    with urllib.request.urlopen(base + COLLECTIONS + "/minilm", timeout=30) as response:
        collection = json.loads(response.read())["id"]
    return process, f"{base}{COLLECTIONS}/{collection}/query"


def recall_of_chroma(url: str, service: str, queries: np.ndarray, count: int = 200) -> float:
    """Mean share of the service's exact 10 that Chroma's 10 contain, over `count` queries."""
    found = 0
    for vector in queries[:count]:
        exact = post(service, {"vector": vector.tolist(), "k": K})
        theirs = post(url, {"query_embeddings": [vector.tolist()], "n_results": K,
                            "include": ["distances"]})  # fmt: skip
        ids = {int(i) for i in theirs["ids"][0]}
        found += len(ids & {n["id"] for n in exact["neighbors"]})
    return found / (K * count)


def timed(pids: list[int], url: str, bodies: list[str], seconds: int) -> tuple[WrkResult, float]:
    """One wrk run (-t1 -c32) and the server processes' CPU microseconds per request during it."""
    before = sum(cpu_seconds(pid) for pid in pids)
    result = run_wrk(url, CONNECTIONS, seconds, bodies, threads=1)
    spent = sum(cpu_seconds(pid) for pid in pids) - before
    return result, spent / max(1, result.requests) * 1e6


def batches_so_far(url: str) -> dict[float, float]:
    """The search batcher's batch-size histogram so far, from the server's /metrics: batches
    of at most `le` queries, by `le` (with several workers, the one that answered)."""
    base = url.split("/v1/", 1)[0]
    with urllib.request.urlopen(base + "/metrics", timeout=10) as response:
        text = response.read().decode()
    return {
        float(sample.labels["le"]): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "embedding_service_batch_size_bucket"
        and sample.labels.get("operation") == "search"
    }


def batch_sizes(before: dict[float, float], after: dict[float, float]) -> str:
    """How many batches a run formed, by size (the histogram's buckets), and their mean."""
    counts, below, low = [], 0.0, 0.0
    for le in sorted(after):
        batches = after[le] - before.get(le, 0.0) - below
        below += batches
        if batches:
            counts.append(f"{low + 1:.0f}-{le:.0f}: {batches:,.0f}" if le > low + 1 else
                          f"{le:.0f}: {batches:,.0f}")  # fmt: skip
        low = le
    return f"{below:,.0f} batches ({'; '.join(counts)})"


def main() -> None:
    """Load both servers, measure them in alternation, print each run, the medians, ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--workers", type=int, nargs="+", default=[1],
                        help="the service's worker processes (one server each)")  # fmt: skip
    parser.add_argument("--chroma-venv", type=Path, default=Path("/tmp/chroma-venv"))
    args = parser.parse_args()
    print(f"command: python -m benchmarks.peers {' '.join(sys.argv[1:])}")
    print(f"machine: {machine()}; wrk -t1 -c{CONNECTIONS}, "
          f"{args.seconds} s a run, load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    table = default_vocabulary()
    rows = np.asarray(table.vectors, dtype=np.float32, order="C")
    queries = noisy_rows(rows, QUERIES)
    ours = [json.dumps({"vector": q.tolist(), "k": K}) for q in queries]
    theirs = [json.dumps({"query_embeddings": [q.tolist()], "n_results": K,
                          "include": ["distances"]}) for q in queries]  # fmt: skip
    python = chroma_python(args.chroma_venv)
    version = subprocess.run([str(python), "-c", "import chromadb; print(chromadb.__version__)"],
                             capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    with tempfile.TemporaryDirectory() as scratch, contextlib.ExitStack() as stack:
        started = time.perf_counter()
        chroma, chroma_url = start_chroma(python, Path(scratch), rows)
        stack.callback(chroma.kill)
        print(f"Chroma {version}: {len(rows):,} rows added and served in "
              f"{time.perf_counter() - started:.0f} s")  # fmt: skip
        servers: dict[str, tuple[int, str, list[str]]] = {}
        for workers in args.workers:
            service, base = start_server(None, "--workers", str(workers))
            stack.callback(service.kill)
            servers[service_name(workers)] = (service.pid, base + NEIGHBORS, ours)
        servers["chroma"] = (chroma.pid, chroma_url, theirs)
        recall = recall_of_chroma(chroma_url, servers[service_name(args.workers[0])][1], queries)
        print(f"Chroma's recall@{K} against the service's exact answers: {recall:.3f}")
        for _, url, bodies in servers.values():  # warm-up
            run_wrk(url, CONNECTIONS, 2, bodies, threads=1)
        runs: dict[str, list[tuple[WrkResult, float]]] = {name: [] for name in servers}
        for round_ in range(args.rounds):
            order = list(servers) if round_ % 2 == 0 else list(reversed(servers))
            for name in order:
                pid, url, bodies = servers[name]
                ours = name != "chroma"
                before = batches_so_far(url) if ours else {}
                # Workers are the supervisor's children (Chroma's own children are counted too).
                result, cpu = timed([pid, *child_pids(pid)], url, bodies, args.seconds)
                runs[name].append((result, cpu))
                formed = f"; {batch_sizes(before, batches_so_far(url))}" if ours else ""
                print(f"round {round_ + 1} {name:>11}: {result.requests_per_second:,.0f} req/s, "
                      f"p50 {result.p50_ms:.1f} ms, p99 {result.p99_ms:.1f} ms, "
                      f"{result.failures} failures [{cpu:,.0f} us CPU/request]{formed}",
                      flush=True)  # fmt: skip
    report(runs)


def service_name(workers: int) -> str:
    return "service" if workers == 1 else f"service x{workers}"


def report(runs: dict[str, list[tuple[WrkResult, float]]]) -> None:
    """Medians per server, and each service's ratios to Chroma."""
    medians = {}
    for name, results in runs.items():
        medians[name] = (
            statistics.median(r.requests_per_second for r, _ in results),
            statistics.median(r.p99_ms for r, _ in results),
            statistics.median(cpu for _, cpu in results),
        )
        rate, p99, cpu = medians[name]
        print(f"median {name:>11}: {rate:,.0f} req/s, p99 {p99:.1f} ms, {cpu:,.0f} us CPU/request")
    theirs = medians["chroma"]
    for name, ours in medians.items():
        if name != "chroma":
            print(
                f"{name} / chroma: {ours[0] / theirs[0]:.1f}x req/s, "
                f"p99 {ours[1] / theirs[1]:.2f}x, CPU per request {ours[2] / theirs[2]:.2f}x"
            )


if __name__ == "__main__":
    main()
