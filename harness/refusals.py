"""The costliest bodies the default limits refuse or just accept, for the worst-case benchmark
and the attack catalogue: lists of a million bad items, of a million empty objects, one bad item
short of a bound, each with the status it must get."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from service.config import Settings


def listed_questions(settings: Settings, answer_within: bool = True) -> bytes:
    """An /evaluate body of as many questions as allowed, each listed (questions;
    dummy4unknown: out of vocabulary too), of words whose upper-casing triples their bytes
    ('\u0390', 2 bytes of UTF-8, is 3 characters of 2): the largest answer the limits accept,
    just within max_body_bytes, or (not `answer_within`) the body that fills max_body_bytes, whose
    answer is refused once it is written."""
    count = settings.max_evaluation_questions

    def make(letters: int) -> dict[str, Any]:
        line = " ".join(["\u0390" * letters] * 4)
        text = ": s\n" + "\n".join([line] * count) + "\n"
        return {"analogies": text, "questions": True, "dummy4unknown": True}

    def answer_bytes(letters: int) -> int:
        question = [("\u0390" * letters).upper()] * 4
        listed = len(json.dumps(question, ensure_ascii=False, separators=(",", ":")).encode())
        return count * (listed + 1) + 1024  # a comma each, and the figures around them

    def body_bytes(letters: int) -> int:
        return len(json.dumps(make(letters), ensure_ascii=False).encode())

    size = answer_bytes if answer_within else body_bytes
    letters = 1
    while size(letters + 1) <= settings.max_body_bytes:
        letters += 1
    return json.dumps(make(letters), ensure_ascii=False).encode()


def filled(limit: int, make: Callable[[int], Any], most: int | None = None) -> bytes:
    """The JSON of make(n) for the largest n (at most `most`) whose body fits in `limit`."""
    low, high = 1, most or limit
    while low < high:
        middle = (low + high + 1) // 2
        if len(json.dumps(make(middle), separators=(",", ":"))) <= limit:
            low = middle
        else:
            high = middle - 1
    return json.dumps(make(low), separators=(",", ":")).encode()


def invalid_bodies(settings: Settings) -> list[tuple[str, str, bytes, int]]:
    """(name, path, body, expected status) of the costliest refusals within max_body_bytes."""
    limit = settings.max_body_bytes
    million = 1_000_000
    return [
        ("tokenize: detokenize, 1M booleans", "tokenize",
         filled(limit, lambda n: {"detokenize": [True] * n}, million), 413),
        ("tokenize: detokenize, over 1M strings", "tokenize",
         filled(limit, lambda n: {"detokenize": ["a"] * n}), 413),
        ("tokenize: detokenize, max_body_values strings", "tokenize",
         filled(limit, lambda n: {"detokenize": ["ab"] * n}, settings.max_body_values - 2), 422),
        ("tokenize: 10,000 texts of commas (counted outside strings)", "tokenize",
         filled(limit, lambda n: {"texts": ["," * (n // 10_000)] * 10_000}), 422),
        ("trajectory: 1M numbers as tokens", "trajectory",
         filled(limit, lambda n: {"tokens": [1] * n}, million), 413),
        ("neighbors: a batch of empty objects", "neighbors",
         filled(limit, lambda n: {"queries": [{}] * n}), 413),
        ("similarity: pairs of empty objects", "similarity",
         filled(limit, lambda n: {"pairs": [[{}, {}]] * n}), 413),
        ("similarity: 10,000 pairs of bad tokens", "similarity",
         filled(limit, lambda n: {"pairs": [[{"x": 1}, {"x": 1}]] * n}, 10_000), 422),
        ("project: empty vectors", "project",
         filled(limit, lambda n: {"vectors": [[]] * n}), 413),
        ("lookup: 10,000 booleans as ids", "lookup",
         filled(limit, lambda n: {"ids": [True] * n}, 10_000), 422),
        ("neighbors: one vector of 1M numbers", "neighbors",
         filled(limit, lambda n: {"vector": [0.5] * n}), 413),
        ("score: a vector of 65,536 strings (one error, not one each)", "score",
         filled(limit, lambda n: {"vector": ["x"] * n}, 65_536), 422),
        ("analogy: 10,000 numbers as terms", "analogy",
         filled(limit, lambda n: {"positive": [1] * n}, 10_000), 422),
        ("analogy: 256 queries of 400 term objects (over max_terms)", "analogy",
         json.dumps({"queries": [{"positive": [{"token": "a"}] * 400}] * 256}).encode(), 422),
        ("rank: others of over 1M numbers", "rank",
         filled(limit, lambda n: {"token": "king", "others": [1] * n}), 413),
        ("rank: 10,000 booleans as others (over max_batch)", "rank",
         filled(limit, lambda n: {"token": "king", "others": [True] * n}, 10_000), 422),
        ("cosines: 10,000 term objects (over max_terms)", "cosines",
         filled(limit, lambda n: {"positive": [{"token": "a"}] * n}, 10_000), 422),
        ("cosines: one vector of max_body_values numbers", "cosines",
         filled(limit, lambda n: {"vector": [-0.0123456] * n}, settings.max_body_values - 2), 422),
        ("neighbors: one vector of max_body_values numbers", "neighbors",
         filled(limit, lambda n: {"vector": [-0.0123456] * n}, settings.max_body_values - 2), 422),
        ("evaluate: 20,000 questions listed past max_body_bytes", "evaluate",
         listed_questions(settings, answer_within=False), 422),
    ]  # fmt: skip
