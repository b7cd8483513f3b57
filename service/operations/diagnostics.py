"""Answering /diagnostics and /evaluate: which rows not to trust, and how good the table is.

Both pass over the whole table, so they run as analyses (runtime/analyses.py): on a thread of
their own, never on the event loop, at most analysis_concurrency at a time, within a deadline.
A table's default diagnostics are computed once per load (in the background right after it,
with diagnostics_at_load) and cached with it; so is an evaluation by a built-in set.

Their answers are written as plain dicts from the engine's results (the reports below): the
command line prints the same dicts (`embedding-service diagnose` / `evaluate`), so the shapes
are the response models of service/schemas/diagnostics.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from service.data import builtin_text
from service.engine.analysis.diagnostics import (
    Analysis,
    CountReport,
    NormSummary,
    Reference,
    TableDiagnostics,
)
from service.engine.analysis.evaluation import (
    AnalogyEvaluation,
    Section,
    evaluate_analogies,
    read_questions,
)
from service.engine.analysis.references import check_reference, matching_rows
from service.engine.analysis.statistics import Correlation
from service.engine.analysis.word_pairs import PairsEvaluation, evaluate_pairs, read_pairs
from service.engine.served import ServedTable
from service.engine.tables.table import EmbeddingTable
from service.metrics import timed
from service.operations.answers import dumps
from service.operations.context import Context
from service.operations.limits import Limits
from service.operations.resolving import Resolver
from service.schemas.diagnostics import (
    DiagnosticsRequest,
    EvaluateRequest,
    PatternReference,
    ReferenceChoice,
    TokensReference,
)

# Analogy questions per pass over the table: 256 x MiniLM's rows of float32 scores is 31 MB
# (1024 would be 125 MB for 25% less time).
EVALUATION_BATCH = 256


async def diagnostics(body: DiagnosticsRequest, context: Context) -> bytes:
    """The /diagnostics answer."""
    return await _off_loop(
        context, lambda: dumps(diagnostics_answer(context.served, context.limits, body))
    )


async def evaluate(body: EvaluateRequest, context: Context) -> bytes:
    """The /evaluate answer; one listing its questions is at most max_body_bytes (upper-casing
    can make it three times the text it lists)."""

    def answer() -> bytes:
        encoded = dumps(evaluation_answer(context.served, context.limits, body))
        if body.questions:
            context.limits.check_listed_bytes(len(encoded))
        return encoded

    return await _off_loop(context, answer)


async def _off_loop(context: Context, work: Callable[[], bytes]) -> bytes:
    return await context.runtime.analyses.run(work)


def diagnostics_answer(
    served: ServedTable, limits: Limits, body: DiagnosticsRequest
) -> dict[str, Any]:
    """Resolve the request's tokens, rank (or take the cached ranking), and report."""
    limits.check_batch(len(body.tokens))
    limit = limits.suspects_page(body.limit)
    resolver = Resolver(served, limits)
    reference_tokens = body.reference.tokens if isinstance(body.reference, TokensReference) else []
    resolver.resolve([*body.tokens, *reference_tokens])
    diagnostics = served.diagnostics
    with timed("diagnostics"):
        analysis = _analysis(served, diagnostics, resolver, body.reference)
        norms = diagnostics.norm_summary()
        named = np.fromiter(dict.fromkeys(resolver.rows[t] for t in body.tokens), dtype=np.int64)
        page = (body.offset, limit)
        report = diagnostics_report(served.table, analysis, norms, body.fraction, named, page)
    return {"matched": resolver.matched, **report}


def _analysis(
    served: ServedTable,
    diagnostics: TableDiagnostics,
    resolver: Resolver,
    reference: ReferenceChoice,
) -> Analysis:
    if reference == "default":
        return diagnostics.default()
    if reference is None:
        return diagnostics.by_norm()
    rows_count = served.table.rows
    if isinstance(reference, PatternReference):
        what = "the reference pattern"
        rows = matching_rows(served.table.tokens, reference.pattern)
    else:
        what = "the reference tokens"
        rows = np.unique(resolver.row_array(reference.tokens))
    check_reference(rows, rows_count, what)
    return diagnostics.by_reference(Reference(rows, what))


Evaluation = AnalogyEvaluation | PairsEvaluation


def evaluation_answer(served: ServedTable, limits: Limits, body: EvaluateRequest) -> dict[str, Any]:
    """gensim's analogy or word-pair figures for the request's set; a built-in set's are
    computed once per table load (builtin_evaluations_kept of them)."""
    source, kind, text = _evaluation_set(body)

    def compute() -> Evaluation:
        with timed("evaluate"):
            return _evaluation(served, limits, body, kind, text)

    if body.builtin is None:
        evaluation = compute()
    else:
        key = (body.builtin, body.restrict, body.case_insensitive, body.dummy4unknown)
        kept = limits.settings.builtin_evaluations_kept
        evaluation = served.evaluations.get(key, compute, kept)
    if isinstance(evaluation, AnalogyEvaluation):
        return analogy_report(evaluation, source, body.questions)
    return pairs_report(evaluation, source)


def _evaluation(
    served: ServedTable, limits: Limits, body: EvaluateRequest, kind: str, text: str
) -> Evaluation:
    search, restrict, folded = served.search, body.restrict, body.case_insensitive
    dummy = body.dummy4unknown
    if kind == "analogies":
        parsed = read_questions(text, folded)
        limits.check_questions(len(parsed.questions))
        return evaluate_analogies(search, parsed, restrict, folded, EVALUATION_BATCH, dummy)
    pairs = read_pairs(text, folded)
    limits.check_questions(len(pairs.pairs))
    return evaluate_pairs(search, pairs, restrict, folded, dummy)


def _evaluation_set(body: EvaluateRequest) -> tuple[str, str, str]:
    """(source, kind, text) of the set to evaluate."""
    if body.builtin is not None:
        text, kind = builtin_text(body.builtin)
        return body.builtin, kind, text
    if body.analogies is not None:
        return "request", "analogies", body.analogies
    assert body.pairs is not None
    return "request", "pairs", body.pairs


# Reference tokens named in the answer's indicator: enough to see what matched.
REFERENCE_SAMPLE = 10


def diagnostics_report(
    table: EmbeddingTable,
    analysis: Analysis,
    norms: NormSummary,
    fraction: float,
    named: np.ndarray,
    page: tuple[int, int],
) -> dict[str, Any]:
    """The whole /diagnostics answer but `matched`; `page` is (offset, limit)."""
    ranking = analysis.ranking
    offset, limit = page
    suspects = ranking.suspects(fraction)
    report: dict[str, Any] = {
        "indicator": {
            "name": ranking.indicator,
            "why": ranking.why,
            "reference_rows": int(ranking.reference.size),
            "reference_sample": [table.tokens[r] for r in ranking.reference[:REFERENCE_SAMPLE]],
        },
        "rows": table.rows,
        "ranked_rows": ranking.candidates,
        "fraction": fraction,
        "suspect_count": int(suspects.size),
        "offset": offset,
        "limit": limit,
        "suspects": row_reports(table, analysis, suspects[offset : offset + limit]),
        "tokens": token_reports(table, analysis, named, suspects),
        "norms": norm_report(table, norms, limit),
    }
    if analysis.counts is not None:
        report["counts"] = count_figures(analysis.counts)
    return report


def row_reports(
    table: EmbeddingTable, analysis: Analysis, rows: np.ndarray
) -> list[dict[str, Any]]:
    """{"token", "id", "indicator", "norm", "percentile", "count", "metadata"} per row."""
    ranking = analysis.ranking
    norms = analysis.norms
    columns = list(table.metadata.items())
    count_of = table.metadata[analysis.counts.column] if analysis.counts else None
    ids = rows.tolist()
    reports = [
        {
            "token": table.tokens[row],
            "id": row,
            "indicator": indicator,
            "norm": norm,
            "percentile": percentile,
            "metadata": {name: column[row] for name, column in columns},
        }
        for row, indicator, norm, percentile in zip(
            ids,
            ranking.values[rows].tolist(),
            norms[rows].tolist(),
            ranking.percentiles(rows).tolist(),
            strict=True,
        )
    ]
    if count_of is not None:
        for report, row in zip(reports, ids, strict=True):
            report["count"] = count_of[row]
    return reports


def token_reports(
    table: EmbeddingTable, analysis: Analysis, rows: np.ndarray, suspects: np.ndarray
) -> list[dict[str, Any]]:
    """Row reports of named rows, with whether each is suspect and whether it is a reference."""
    reports = row_reports(table, analysis, rows)
    reference = np.isin(rows, analysis.ranking.reference)
    flagged = np.isin(rows, suspects) | reference | (analysis.norms[rows] == 0)
    for report, suspect, is_reference in zip(
        reports, flagged.tolist(), reference.tolist(), strict=True
    ):
        report["suspect"] = suspect
        report["reference"] = is_reference
    return reports


def norm_report(table: EmbeddingTable, norms: NormSummary, limit: int) -> dict[str, Any]:
    """Norm percentiles, the number of zero rows and the first `limit` of their tokens."""
    return {
        "percentiles": {str(p): value for p, value in norms.percentiles.items()},
        "zero_rows": int(norms.zero_rows.size),
        "zero_tokens": [table.tokens[row] for row in norms.zero_rows[:limit].tolist()],
    }


def count_figures(report: CountReport) -> dict[str, Any]:
    """The count correlations (each left out when undefined) and the norms by count bin."""
    figures: dict[str, Any] = {
        "column": report.column,
        "rows": report.rows,
        "bins": [
            {"low": b.low, "high": b.high, "rows": b.rows, "norm_quartiles": list(b.norm_quartiles)}
            for b in report.bins
        ],
    }
    for name, correlation in (
        ("spearman_norm", report.norm),
        ("spearman_indicator", report.indicator),
    ):
        if correlation is not None:
            figures[name] = spearman_figure(correlation)
    return figures


def spearman_figure(correlation: Correlation) -> dict[str, float | int]:
    """{"rho", "p_value", "n"} of a Spearman correlation."""
    return {"rho": correlation.r, "p_value": correlation.p_value, "n": correlation.n}


def analogy_report(
    evaluation: AnalogyEvaluation, source: str, questions: bool = False
) -> dict[str, Any]:
    """gensim's evaluate_word_analogies figures, as counts and accuracies; with `questions`,
    each section's correct and incorrect questions too (the total's are theirs, not repeated)."""
    total = Section("Total accuracy")
    for section in evaluation.sections:
        total.correct += section.correct
        total.incorrect += section.incorrect
    return {
        "kind": "analogies",
        "source": source,
        "sections": [section_score(section, questions) for section in evaluation.sections],
        "total": section_score(total),
        "questions": evaluation.questions,
        "oov": evaluation.oov,
        "oov_percent": evaluation.oov_percent,
        "invalid_lines": evaluation.invalid_lines,
    }


def section_score(section: Section, questions: bool = False) -> dict[str, Any]:
    """{"section", "correct", "incorrect", "accuracy"} of one section, and its "questions"."""
    score: dict[str, Any] = {
        "section": section.name,
        "correct": len(section.correct),
        "incorrect": len(section.incorrect),
        "accuracy": section.accuracy,
    }
    if questions:
        score["questions"] = {"correct": section.correct, "incorrect": section.incorrect}
    return score


def pairs_report(evaluation: PairsEvaluation, source: str) -> dict[str, Any]:
    """gensim's evaluate_word_pairs figures."""
    return {
        "kind": "pairs",
        "source": source,
        "pearson": {"r": evaluation.pearson.r, "p_value": evaluation.pearson.p_value},
        "spearman": {"r": evaluation.spearman.r, "p_value": evaluation.spearman.p_value},
        "pairs": evaluation.scored,
        "oov": evaluation.oov,
        "oov_percent": evaluation.oov_percent,
        "invalid_lines": evaluation.invalid_lines,
    }
