"""Answering /diagnostics and /evaluate: which rows not to trust, and how good the table is.

Both pass over the whole table, so they run on a worker thread, never on the event loop, at
most analysis_concurrency at a time. A table's default diagnostics are computed once per load
(in the background right after it, with diagnostics_at_load) and cached with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import numpy as np

from service.data import builtin_text
from service.engine.analysis.diagnostics import Analysis, Reference, TableDiagnostics
from service.engine.analysis.evaluation import evaluate_analogies, read_questions
from service.engine.analysis.references import check_reference, matching_rows
from service.engine.analysis.word_pairs import evaluate_pairs, read_pairs
from service.engine.served import ServedTable
from service.metrics import timed
from service.operations.context import Context
from service.operations.limits import Limits
from service.operations.reports import analogy_report, diagnostics_report, pairs_report
from service.operations.resolve import Resolver
from service.operations.serialize import dumps
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
    return await anyio.to_thread.run_sync(work, limiter=context.runtime.analyses)


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


def evaluation_answer(served: ServedTable, limits: Limits, body: EvaluateRequest) -> dict[str, Any]:
    """gensim's analogy or word-pair figures for the request's set."""
    source, kind, text = _evaluation_set(body)
    search, restrict, folded = served.search, body.restrict, body.case_insensitive
    dummy = body.dummy4unknown
    with timed("evaluate"):
        if kind == "analogies":
            parsed = read_questions(text, folded)
            limits.check_questions(len(parsed.questions))
            evaluation = evaluate_analogies(
                search, parsed, restrict, folded, EVALUATION_BATCH, dummy
            )
            return analogy_report(evaluation, source, body.questions)
        pairs = read_pairs(text, folded)
        limits.check_questions(len(pairs.pairs))
        return pairs_report(evaluate_pairs(search, pairs, restrict, folded, dummy), source)


def _evaluation_set(body: EvaluateRequest) -> tuple[str, str, str]:
    """(source, kind, text) of the set to evaluate."""
    if body.builtin is not None:
        text, kind = builtin_text(body.builtin)
        return body.builtin, kind, text
    if body.analogies is not None:
        return "request", "analogies", body.analogies
    assert body.pairs is not None
    return "request", "pairs", body.pairs
