"""Recall@10 against queries/s of benchmarks/index_sweep.py's points: one line per index,
through its best settings (the grid's frontier); with --row-major, one more per index for its
rows held row after row."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any


def label(point: dict[str, Any]) -> str:
    """The index a point belongs to: its kind and build parameters (and an IVF kind's probe
    margin, when the sweep measured it: each margin is a line of its own)."""
    kind = point["kind"]
    margin = point.get("probe_margin")
    margin_label = "" if margin is None else f", probe_margin={margin:g}"
    if kind in ("fastscan", "ivfpq"):
        return f"{kind} nlist={point['nlist']} M={point['pq_m']}{margin_label} (rescored exactly)"
    if kind == "ivf":
        return f"ivf nlist={point['nlist']}{margin_label}"
    return f"{kind} M={point.get('hnsw_m')}"


def frontier(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The points no other point beats on both recall and q/s, by q/s (a grid's best line)."""
    best: list[dict[str, Any]] = []
    for point in sorted(points, key=lambda p: -p["queries_per_second"]):
        if not best or point["recall_at_10"] > best[-1]["recall_at_10"]:
            best.append(point)
    return best[::-1]


def lines_of(points: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The plot's lines: each index's frontier, and with --row-major, the same settings
    measured in the same run on the rows held row after row (layout "rows") as a line of its
    own."""
    lines: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for point in points:
        lines[label(point)].append(point)
        by_rows = point.get("row_major_queries_per_second")
        if by_rows is not None:
            lines[label(point) + ", layout rows"].append({**point, "queries_per_second": by_rows})
    return {name: frontier(members) for name, members in lines.items()}


def plot(points: list[dict[str, Any]], exact_qps: float, path: Path, title: str) -> bool:
    """Draw the points (False without matplotlib, the bench extra)."""
    try:
        import matplotlib
    except ImportError:
        print(f"no plot ({path}): matplotlib is not installed (the bench extra)")
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(8, 5))
    for name, members in lines_of(points).items():
        axis.plot([p["queries_per_second"] for p in members],
                  [p["recall_at_10"] for p in members], "o-", markersize=3, label=name)  # fmt: skip
    axis.axvline(exact_qps, color="grey", linestyle=":", label="exact path")
    finish(figure, axis, "queries per second, one query per call, 1 thread, 2 shared cores",
           f"{title}: recall against throughput", path)  # fmt: skip
    print(f"wrote {path}")
    return True


def finish(figure: Any, axis: Any, xlabel: str, title: str, path: Path) -> None:
    """The recall-0.95 line, log q/s axis, labels and legend; saved to `path`."""
    axis.axhline(0.95, color="red", linewidth=0.8, linestyle=":", label="recall 0.95")
    axis.set_xscale("log")
    axis.set_xlabel(xlabel)
    axis.set_ylabel("recall@10 against the exact path")
    axis.set_title(title)
    axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
