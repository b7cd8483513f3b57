"""Diagnostics and evaluation plans: suspect rows, and gensim's figures for a whole table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, TypedDict, Unpack, overload

from embedding_service.decoding import decode
from embedding_service.models.diagnostics import AnalogyEvaluation, Diagnostics, PairsEvaluation
from embedding_service.plans import Plan, body, one_call, post


def diagnostics(
    table: str,
    *,
    reference: Literal["default"] | Sequence[str] | None = "default",
    pattern: str | None = None,
    fraction: float = 0.02,
    tokens: Sequence[str] = (),
    limit: int | None = None,
    offset: int = 0,
) -> Plan[Diagnostics]:
    """The rows most likely under-trained, ranked against reference rows (or by low norm).

    reference: "default" (the built-in unused-token pattern), a list of tokens, or None (the
    norm indicator); `pattern` (RE2) picks the reference rows instead.
    """
    chosen: Any = reference
    if pattern is not None:
        chosen = {"pattern": pattern}
    elif reference is not None and not isinstance(reference, str):
        chosen = {"tokens": list(reference)}
    request = {"reference": chosen, "fraction": fraction, "tokens": list(tokens), "offset": offset}
    call = post(table, "diagnostics", {**request, **body(limit=limit)})
    return one_call(call, lambda answer: decode(Diagnostics, answer))


class EvaluationOptions(TypedDict, total=False):
    """gensim's options of an evaluation: `restrict` (its restrict_vocab, default 300,000),
    `case_insensitive` (default True) and `dummy4unknown` (default False: a pair out of
    vocabulary scores 0.0, a question counts as incorrect)."""

    restrict: int
    case_insensitive: bool
    dummy4unknown: bool


@overload
def evaluate(
    table: str,
    *,
    analogies: str | None = None,
    builtin: Literal["questions-words"] | None = None,
    questions: bool = False,
    **options: Unpack[EvaluationOptions],
) -> Plan[AnalogyEvaluation]: ...
@overload
def evaluate(
    table: str, *, pairs: str, **options: Unpack[EvaluationOptions]
) -> Plan[PairsEvaluation]: ...
def evaluate(
    table: str,
    *,
    analogies: str | None = None,
    pairs: str | None = None,
    builtin: Literal["questions-words"] | None = None,
    questions: bool = False,
    **options: Unpack[EvaluationOptions],
) -> Plan[AnalogyEvaluation] | Plan[PairsEvaluation]:
    """gensim's evaluate_word_analogies (analogies text, or a builtin set) or
    evaluate_word_pairs (pairs text) figures, computed by the service; questions: each
    section's correct and incorrect questions too (analogies).
    """
    source = body(analogies=analogies, pairs=pairs, builtin=builtin)
    if len(source) != 1:
        raise TypeError("give exactly one of analogies, pairs and builtin")
    # dummy4unknown and questions are sent only when they are asked for.
    flags = body(
        dummy4unknown=options.pop("dummy4unknown", False) or None, questions=questions or None
    )
    request = {**source, "restrict": 300_000, "case_insensitive": True, **options, **flags}
    kind: type[Any] = PairsEvaluation if pairs is not None else AnalogyEvaluation
    call = post(table, "evaluate", request)
    return one_call(call, lambda answer: decode(kind, answer))
