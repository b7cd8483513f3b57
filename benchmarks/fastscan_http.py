"""Fast-scan over HTTP on a prepared table: recall@10 against req/s, 1 and 2 workers, cache off.

    python -m harness.synthetic_table /var/tmp/fs3m/table.bin --rows 3000000 --width 300
    embedding-service prepare /var/tmp/fs3m/table.bin /var/tmp/fs3m/prepared \\
        --index fastscan --nlist 2048 --pq-m 300
    python -m benchmarks.fastscan_http /var/tmp/fs3m/prepared --settings 16:4 32:8 64:8
    embedding-service prepare /var/tmp/fs3m/table.bin /var/tmp/fs3m/prepared-rows --layout rows \\
        --index fastscan --nlist 2048 --pq-m 300
    python -m benchmarks.fastscan_http /var/tmp/fs3m/prepared /var/tmp/fs3m/prepared-rows
    python -m benchmarks.fastscan_http /var/tmp/fs3m/prepared-rows \\
        /var/tmp/fs3m/prepared-rows:EMBEDDING_SERVICE_BATCH_PIPELINING=false --workers 2
    python -m benchmarks.fastscan_http /var/tmp/fs3m/prepared-rows@/work/wt-head \\
        /var/tmp/fs3m/prepared-rows --workers 2

The goal it measures: recall@10 >= 0.95 at >= 1,000 req/s over HTTP with 2 workers on the
prepared 3M x 300 table, the answer cache off. Servers are real `python -m service serve`
processes on the folder's saved index (benchmarks/big_tables_http.py starts them). For each
`nprobe:k_factor[:probe_margin]` setting (without a margin, the table's): recall@10 measured
over HTTP, each answer for 200 random tokens against the same server's `exact: true` answer;
then wrk (32 connections, after a 3-second warm-up) for `--seconds`, distinct random tokens,
and the workers' CPU time per request (utime + stime over the run, from /proc). Prints its
command, one line per point and the memory of each worker; `--out` writes the points as JSON,
by folder name, then workers. Several folders (the same table prepared in both layouts,
`prepare --layout`) are measured in turn for each number of workers, in the opposite order for
the next. `DIR:NAME=VALUE[,...]` serves DIR with those settings in the server's environment,
and `DIR@CHECKOUT` with the code of another checkout (a worktree of an earlier commit), each as
a variant of its own, so one folder can be measured under two settings or two revisions side by
side.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.big_tables_http import (
    CONNECTIONS,
    serve,
    status_of,
    stop,
    token_bodies,
    wait_for_index,
)
from benchmarks.peers import post
from harness.machine import machine
from harness.processes import child_pids, cpu_seconds, memory_of
from harness.variants import settings_of
from harness.wrk import run_wrk

RECALL_TOKENS = 200
WARM_SECONDS = 3


def ids(answer: dict[str, Any]) -> set[int]:
    """The row ids of a neighbours answer."""
    return {neighbor["id"] for neighbor in answer["neighbors"]}


class Setting:
    """`nprobe:k_factor[:probe_margin]`: one point's per-request search options."""

    def __init__(self, text: str) -> None:
        nprobe, k_factor, *margin = text.split(":")
        self.label = text
        self.options: dict[str, Any] = {"nprobe": int(nprobe), "k_factor": int(k_factor)}
        if margin:
            self.options["probe_margin"] = float(margin[0])

    def __str__(self) -> str:
        return ", ".join(f"{key} {value}" for key, value in self.options.items())


def recall_at_10(url: str, prepared: Path, settings: list[Setting]) -> dict[str, float]:
    """Each setting's recall@10 over HTTP against the server's own exact answers."""
    probes = [json.loads(body) for body in token_bodies(prepared, RECALL_TOKENS)]
    truths = [ids(post(url, {**probe, "exact": True})) for probe in probes]
    recall = {}
    for setting in settings:
        hits = sum(
            len(ids(post(url, {**probe, **setting.options})) & truth)
            for probe, truth in zip(probes, truths, strict=True)
        )
        recall[setting.label] = hits / sum(len(truth) for truth in truths)
    return recall


class Variant:
    """A prepared folder, the checkout that serves it, and settings for its server:
    `DIR[@CHECKOUT][:NAME=VALUE,...]`."""

    def __init__(self, text: str) -> None:
        path, _, assignments = text.partition(":")
        path, _, checkout = path.partition("@")
        self.folder = Path(path)
        self.checkout = checkout or None
        self.env = settings_of(assignments)
        self.name = self.folder.name + (f"@{Path(checkout).name}" if checkout else "")
        self.name += "".join(f"[{k}={v}]" for k, v in self.env.items())


def measure(
    variant: Variant, workers: int, settings: list[Setting], seconds: int,
    recall: dict[str, float],
) -> dict[str, Any]:  # fmt: skip
    """One server with `workers` workers: every setting's req/s and CPU per request."""
    prepared, name = variant.folder, variant.name
    process, base = serve(prepared, None, workers, variant.env, variant.checkout)
    try:
        while status_of(f"{base}/readyz") != 200:
            if process.poll() is not None:
                raise RuntimeError(f"the server exited with {process.returncode}")
            time.sleep(0.05)
        facts = wait_for_index(base)
        url = f"{base}/v1/tables/big/neighbors"
        pids = child_pids(process.pid) if workers > 1 else [process.pid]
        if not recall:
            recall.update(recall_at_10(url, prepared, settings))
        points = []
        for setting in settings:
            bodies = token_bodies(prepared, **setting.options)
            run_wrk(url, CONNECTIONS, WARM_SECONDS, bodies)
            load = os.getloadavg()[0]
            before = sum(cpu_seconds(pid) for pid in pids)
            result = run_wrk(url, CONNECTIONS, seconds, bodies)
            spent = sum(cpu_seconds(pid) for pid in pids) - before
            point = {
                "workers": workers, **setting.options,
                "recall_at_10": recall[setting.label],
                "requests_per_second": result.requests_per_second, "p50_ms": result.p50_ms,
                "p99_ms": result.p99_ms, "failures": result.failures,
                "cpu_us_per_request": spent / max(1, result.requests) * 1e6, "load": load,
            }  # fmt: skip
            points.append(point)
            print(f"{name}, {workers} worker(s), {setting}: "
                  f"recall@10 "
                  f"{point['recall_at_10']:.3f}, {result.requests_per_second:,.0f} req/s, "
                  f"p50 {result.p50_ms:.1f} ms, p99 {result.p99_ms:.1f} ms, "
                  f"{result.failures} failed, server CPU {point['cpu_us_per_request']:,.0f} "
                  f"us/request (load {load:.1f})", flush=True)  # fmt: skip
        memory = {str(pid): memory_of(pid) for pid in pids}
    finally:
        stop(process)
    for pid, values in memory.items():
        print(f"{name}, {workers} worker(s), pid {pid}: RSS {values['rss_mib']:,.0f} MiB, "
              f"PSS {values['pss_mib']:,.0f} MiB", flush=True)  # fmt: skip
    return {"index": facts["index"], "points": points, "memory": memory}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("prepared", type=Variant, nargs="+",
                        help="prepared folders with a fast-scan index, distinct names; "
                        "DIR@CHECKOUT serves it with another checkout's code, DIR:NAME=VALUE,... "
                        "with settings added to its server's environment")  # fmt: skip
    parser.add_argument("--settings", type=Setting, nargs="+",
                        default=[Setting(text) for text in ("16:4", "32:8", "64:8")],
                        help="nprobe:k_factor[:probe_margin] points "
                        "(default: 16:4 32:8 64:8)")  # fmt: skip
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    print("command: python -m benchmarks.fastscan_http " + shlex.join(sys.argv[1:]), flush=True)
    print(
        f"machine: {machine()}, load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    folders: list[Variant] = args.prepared
    recall: dict[str, dict[str, float]] = {folder.name: {} for folder in folders}
    runs: dict[str, dict[str, Any]] = {folder.name: {} for folder in folders}
    for turn, workers in enumerate(args.workers):
        for folder in folders if turn % 2 == 0 else folders[::-1]:
            runs[folder.name][str(workers)] = measure(
                folder, workers, args.settings, args.seconds, recall[folder.name]
            )
    for name, run in runs.items():
        index = next(iter(run.values()))["index"]
        print(f"{name} index: {json.dumps(index['parameters'])}, "
              f"{index['bytes'] / 2**20:,.1f} MiB, built in {index['build_seconds']:.0f} s",
              flush=True)  # fmt: skip
    if args.out:
        args.out.write_text(json.dumps(runs, indent=1) + "\n")


if __name__ == "__main__":
    main()
