"""Every number in an answer is finite, or the request is refused with 422 (never a null)."""

from __future__ import annotations

import math
from typing import Any

from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

MINILM = "/v1/tables/minilm"


def numbers(value: Any) -> list[Any]:
    """Every scalar in a JSON document (None included, as JSON null)."""
    if isinstance(value, dict):
        return [n for item in value.values() for n in numbers(item)]
    if isinstance(value, list):
        return [n for item in value for n in numbers(item)]
    return [value] if value is None or isinstance(value, int | float) else []


def assert_finite_or_refused(response: Any) -> None:
    if response.status_code == 422:
        assert response.json()["error"]["type"] != "ValidationError"
        return
    assert response.status_code == 200, response.text
    for number in numbers(response.json()):
        assert number is not None and math.isfinite(number), response.text


def test_a_tiny_temperature_is_refused_rather_than_answered_with_null(client: TestClient) -> None:
    body = {"vector": [1.0] * 384, "k": 3, "softmax": True, "temperature": 1e-300}
    response = client.post(f"{MINILM}/score", json=body)
    assert response.status_code == 422
    assert response.json()["error"]["type"] == "InvalidQuery"


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    temperature=st.floats(min_value=1e-308, max_value=1e6, exclude_min=False),
    scale=st.floats(min_value=-1e15, max_value=1e15),
)
def test_scoring_answers_are_finite_at_any_temperature_and_scale(
    client: TestClient, temperature: float, scale: float
) -> None:
    body = {
        "vector": [scale] * 384,
        "k": 3,
        "softmax": True,
        "temperature": temperature,
        "target": "the",
    }
    assert_finite_or_refused(client.post(f"{MINILM}/score", json=body))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(weight=st.floats(min_value=1e-6, max_value=1e6), method=st.sampled_from(["add", "mul"]))
def test_analogy_answers_are_finite_at_any_weight(
    client: TestClient, weight: float, method: str
) -> None:
    body = {
        "positive": [{"token": "king", "weight": weight}, "woman"],
        "negative": [{"token": "man", "weight": weight}],
        "method": method,
        "k": 5,
    }
    assert_finite_or_refused(client.post(f"{MINILM}/analogy", json=body))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    scores=st.lists(
        st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=3, max_size=3
    ),
    fraction=st.floats(1e-9, 0.5),
)
def test_diagnostics_and_evaluation_are_finite(client: TestClient, scores, fraction) -> None:
    words = [("king", "queen"), ("man", "woman"), ("apple", "pear")]
    pairs = "".join(f"{a}\t{b}\t{score!r}\n" for (a, b), score in zip(words, scores, strict=True))
    assert_finite_or_refused(client.post(f"{MINILM}/evaluate", json={"pairs": pairs}))
    body = {"fraction": fraction, "tokens": ["king"], "limit": 5}
    assert_finite_or_refused(client.post(f"{MINILM}/diagnostics", json=body))
