"""Answering /trajectory and /drift: a table's versions followed, and two versions compared.

Both pass over whole checkpoints (the summary once per load, the drift per request), so their
numpy work runs as analyses (runtime/analyses.py): a trajectory in the projections' queue
(projection_concurrency at a time), a drift in the analyses' (analysis_concurrency). Drift's
neighbour lists are /neighbors answers at each version, through the same resolver and search
batcher.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from service.engine.analysis import drift as moves
from service.engine.analysis.diagnostics import count_column
from service.engine.analysis.trajectory import Summary, follow
from service.engine.errors import InvalidQuery
from service.engine.search.cosine import SearchItem
from service.engine.search.queries import Neighbors
from service.engine.served import ServedTable
from service.engine.tables.table import EmbeddingTable
from service.metrics import timed
from service.operations.answers import dumps, neighbor_list
from service.operations.context import Context
from service.operations.diagnostics import spearman_figure
from service.operations.projection import AXES
from service.operations.resolving import Resolver
from service.schemas.search import NeighborsRequest
from service.schemas.training import DriftRequest, TrajectoryRequest

# Rows listed as moved most (and least) when a drift request gives no limit.
DEFAULT_DRIFT_LIMIT = 100


async def trajectory(body: TrajectoryRequest, context: Context) -> bytes:
    """The /trajectory answer."""
    return await context.runtime.projections.run(_trajectory, body, context)


def _trajectory(body: TrajectoryRequest, context: Context) -> bytes:
    served, limits = context.served, context.limits
    versions, projector = served.versions, served.projector
    resolver = Resolver(served, limits)
    limits.check_trajectory(len(body.tokens) if body.tokens else body.points or 0, versions.count)
    if body.tokens is not None:
        named = resolver.resolve(body.tokens).row_array(body.tokens)
        rows = projector.named_rows(named.tolist())
    else:
        rows = projector.select(body.selection, body.points or 0, body.seed)
    with timed("trajectory"):
        basis = projector.basis(limits.settings.projection_sample_rows)
        dims = projector.check_dims(basis, body.dims)
        path = follow(versions, rows, basis, dims)
        summary = served.training.get()
    points = [_point(served, row) for row in rows.tolist()]
    for axis, values in zip(AXES, path.coordinates.T.tolist(), strict=False):
        _fill(points, axis, values)
    for name, array in (
        ("norm", path.norms),
        ("cosine_to_initial", path.cosines),
        ("distance_to_initial", path.distances),
    ):
        _fill(points, name, array.T.tolist())
    return dumps(
        {
            "matched": resolver.matched,
            "dims": dims,
            "explained_variance_ratio": basis.explained_variance_ratio[:dims].tolist(),
            "sample_rows": basis.sample_rows,
            **_summary(served, summary),
            "points": points,
        }
    )


def _point(served: ServedTable, row: int) -> dict[str, Any]:
    table = served.table
    return {"token": table.tokens[row], "id": row, "metadata": table.metadata_of(row)}


def _fill(points: list[dict[str, Any]], name: str, values: list[list[float]]) -> None:
    """Each point's list of values by checkpoint (orjson writes NaN as null)."""
    for point, series in zip(points, values, strict=True):
        point[name] = series


def _summary(served: ServedTable, summary: Summary) -> dict[str, Any]:
    checkpoints = []
    for index, figures in enumerate(summary.checkpoints):
        entry: dict[str, Any] = {
            **served.versions.describe(index),
            "mean_norm": figures.mean_norm,
            "mean_distance_to_initial": figures.mean_distance,
        }
        if not math.isnan(figures.mean_cosine):
            entry["mean_cosine_to_initial"] = figures.mean_cosine
        _add_figure(entry, "spearman_distance", figures.distance_by_count)
        _add_figure(entry, "spearman_norm", figures.norm_by_count)
        checkpoints.append(entry)
    counted: dict[str, Any] = {"counted_rows": summary.counted_rows, "checkpoints": checkpoints}
    if summary.count_column is not None:
        counted["count_column"] = summary.count_column
    return counted


def _add_figure(entry: dict[str, Any], name: str, correlation: Any) -> None:
    if correlation is not None:
        entry[name] = spearman_figure(correlation)


async def drift(body: DriftRequest, context: Context) -> bytes:
    """The /drift answer."""
    limits = context.limits
    limit = (
        min(DEFAULT_DRIFT_LIMIT, limits.settings.max_drift_limit)
        if body.limit is None
        else body.limit
    )
    limits.check_drift(limit, len(body.tokens))
    k = limits.checked_k(body.k)
    limits.check_results(2 * k * len(body.tokens))
    versions = [_version(context, body.source), _version(context, body.target)]
    _check_widths(*versions)
    named = [await _named(context, version, body.tokens, k) for version in versions]
    return await context.runtime.analyses.run(_drift_answer, versions, body.tokens, named, limit)


Version = tuple[ServedTable, int]


def _version(context: Context, version: int | str | None) -> Version:
    """(table, checkpoint) a request names: a checkpoint here, or another table's last."""
    served = context.served
    if version is None:
        return served, served.versions.last
    if isinstance(version, int):
        return served, served.versions.check(version)
    assert context.tables is not None, "drift between tables needs the registry"
    other = context.tables.get(version)
    return other, other.versions.last


def _check_widths(source: Version, target: Version) -> None:
    (first, _), (second, _) = source, target
    if first.table.width != second.table.width:
        raise InvalidQuery(
            f"tables {first.name!r} ({first.table.width} wide) and {second.name!r} "
            f"({second.table.width} wide) cannot be compared row by row"
        )


async def _named(
    context: Context, version: Version, tokens: list[str], k: int
) -> tuple[Resolver, list[Neighbors]]:
    """The named tokens resolved at one version, and their /neighbors answers there (the
    version's index is built only when tokens are named)."""
    served, checkpoint = version
    if not tokens:
        return Resolver(served, context.limits), []
    side = await Context(served, context.limits, context.runtime).at_checkpoint(checkpoint)
    resolver = Resolver(side.served, side.limits).resolve(tokens)
    search = side.served.search
    queries = [NeighborsRequest(token=token, k=k) for token in tokens]
    items = [SearchItem.of(search, search.plan(resolver.neighbor_query(q))) for q in queries]
    return resolver, await side.runtime.search.submit_many(items)


def _drift_answer(
    versions: list[Version],
    tokens: list[str],
    named: list[tuple[Resolver, list[Neighbors]]],
    limit: int,
) -> bytes:
    (source, first), (target, second) = versions
    before, after = source.table, target.table
    vectors = source.versions.vectors(first), target.versions.vectors(second)
    with timed("drift"):
        source_rows, target_rows = moves.shared_rows(before, after)
        if source_rows.size == 0:
            names = " and ".join(_name(version) for version in versions)
            raise InvalidQuery(f"{names} share no tokens: there is nothing to compare")
        movement = moves.measure(*vectors, source_rows, target_rows)
        most, least = moves.most_moved(movement, limit), moves.least_moved(movement, limit)
    column, counts = count_column(after)
    rows = MovedRows(before, after, vectors, column if counts.size else None)
    answer: dict[str, Any] = {
        "matched": {**named[0][0].matched, **named[1][0].matched},
        "from": _describe(versions[0]),
        "to": _describe(versions[1]),
        "shared_tokens": movement.shared,
        "compared_rows": int(movement.directed.size),
        "mean_distance": float(movement.distances.mean()),
        "most_moved": rows.reports(movement, most),
        "least_moved": rows.reports(movement, least),
        "tokens": rows.token_reports(tokens, named),
    }
    if movement.directed.size:
        answer["mean_cosine"] = float(movement.cosines[movement.directed].mean())
    if counts.size:
        answer["counts"] = _count_report(column, moves.count_figures(movement, counts))
    return dumps(answer)


def _name(version: Version) -> str:
    served, checkpoint = version
    return f"table {served.name!r} (checkpoint {checkpoint})"


def _describe(version: Version) -> dict[str, Any]:
    served, checkpoint = version
    return {"table": served.name, **served.versions.describe(checkpoint), "rows": served.table.rows}


class MovedRows:
    """Reports of rows that moved between two versions, and of the named tokens."""

    def __init__(
        self,
        before: EmbeddingTable,
        after: EmbeddingTable,
        vectors: tuple[np.ndarray, np.ndarray],
        column: str | None,
    ) -> None:
        self.before = before
        self.after = after
        self.vectors = vectors
        self.counts = None if column is None else after.metadata[column]

    def reports(self, movement: moves.Movement, positions: np.ndarray) -> list[dict[str, Any]]:
        """One report per position of the movement's shared rows."""
        m, chosen = movement, positions
        columns = zip(
            m.source_rows[chosen].tolist(),
            m.target_rows[chosen].tolist(),
            m.cosines[chosen].tolist(),
            m.distances[chosen].tolist(),
            m.source_norms[chosen].tolist(),
            m.target_norms[chosen].tolist(),
            strict=True,
        )
        return [self._report(*values) for values in columns]

    def _report(self, *values: Any) -> dict[str, Any]:
        source_row, target_row, cosine, distance, source_norm, target_norm = values
        report = {
            "token": self.after.tokens[target_row],
            "from_id": source_row,
            "to_id": target_row,
            "cosine": cosine,
            "distance": distance,
            "from_norm": source_norm,
            "to_norm": target_norm,
        }
        if self.counts is not None:
            report["count"] = self.counts[target_row]
        return report

    def token_reports(
        self, tokens: list[str], named: list[tuple[Resolver, list[Neighbors]]]
    ) -> list[Any]:
        """Each named token's movement and its neighbour lists in both versions, compared."""
        (source, befores), (target, afters) = named
        reports = []
        for token, before, after in zip(tokens, befores, afters, strict=True):
            pair = (np.asarray([source.row(token)]), np.asarray([target.row(token)]))
            movement = moves.measure(*self.vectors, *pair)
            report = self.reports(movement, np.zeros(1, dtype=np.int64))[0]
            report["token"] = token
            lists = neighbor_list(self.before, before), neighbor_list(self.after, after)
            change = moves.compare_neighbours(
                [n["token"] for n in lists[0]],
                [n["token"] for n in lists[1]],
                self.before,
                self.after,
            )
            report |= {
                "k": len(lists[1]),
                "before": lists[0],
                "after": lists[1],
                "overlap": change.overlap,
                "entered": change.entered,
                "left": change.left,
                "unshared": change.unshared,
            }
            reports.append(report)
        return reports


def _count_report(column: str, figures: moves.CountFigures) -> dict[str, Any]:
    report: dict[str, Any] = {"column": column, "rows": figures.rows}
    _add_figure(report, "spearman_distance", figures.distance)
    _add_figure(report, "spearman_cosine", figures.cosine)
    return report
