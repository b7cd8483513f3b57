"""gensim's forms of /analogy and /evaluate through the real app: negative terms alone (3CosAdd),
raw vectors as given (3CosMul, as most_similar_cosmul scores them), dummy4unknown and each
section's questions; every new field refused with the one envelope when it cannot apply."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from gensim.models import KeyedVectors
from gensim.test.utils import datapath

from service.engine.tables.table import EmbeddingTable
from service.schemas.diagnostics import AnalogyEvaluationResponse
from service.schemas.search import NeighborsBatchResponse, NeighborsResponse
from tests.api.test_ranking import scores
from tests.conftest import AppOf
from tests.robustness.conftest import assert_envelope

MINILM = "/v1/tables/minilm"


def post(client: TestClient, operation: str, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post(f"{MINILM}/{operation}", json=body)
    assert response.status_code == 200, response.text
    return response.json()


@pytest.fixture(scope="module")
def keyed(minilm: EmbeddingTable) -> KeyedVectors:
    """gensim's KeyedVectors of the rows the app serves."""
    vectors = KeyedVectors(vector_size=minilm.width)
    vectors.add_vectors(list(minilm.tokens), minilm.vectors.copy())
    return vectors


def test_negative_terms_alone_are_gensim_s_most_similar(client, keyed) -> None:
    for negative in (["man"], ["king", "paris"], [{"token": "queen", "weight": 2.0}, "apple"]):
        answer = post(client, "analogy", {"negative": negative, "k": 8})
        NeighborsResponse.model_validate(answer)
        # gensim's (key, weight) replaces the default weight of -1 of a negative key.
        terms = [(t["token"], -t["weight"]) if isinstance(t, dict) else t for t in negative]
        expected = keyed.most_similar(negative=terms, topn=8)
        got = [(n["token"], n["score"]) for n in answer["neighbors"]]
        assert [token for token, _ in got] == [token for token, _ in expected]
        np.testing.assert_allclose([s for _, s in got], [s for _, s in expected], atol=1e-6)


def test_raw_vectors_as_given_are_gensim_s_most_similar_cosmul(client, keyed, minilm) -> None:
    rng = np.random.default_rng(3)
    for norm in (0.25, 1.0, 3.0, 40.0):
        vector = rng.normal(size=minilm.width)
        vector *= norm / np.linalg.norm(vector)
        body = {
            "positive": ["paris", {"vector": vector.tolist()}],
            "negative": ["france"],
            "method": "mul",
            "vector_terms": "as_given",
            "k": 10,
        }
        got = post(client, "analogy", body)["neighbors"]
        expected = keyed.most_similar_cosmul(["paris", vector], ["france"], topn=10)
        assert [n["token"] for n in got] == [token for token, _ in expected], norm
        np.testing.assert_allclose([n["score"] for n in got], [s for _, s in expected], rtol=1e-5)
        unit = post(client, "analogy", {**body, "vector_terms": "unit"})["neighbors"]
        assert (unit == got) == (norm == 1.0)


def test_a_batch_of_gensim_forms_answers_as_each_alone(client, minilm) -> None:
    vector = (np.random.default_rng(4).normal(size=minilm.width) * 0.3).tolist()
    queries = [
        {"negative": ["man", "woman"], "k": 4},
        {"positive": [{"vector": vector}], "negative": ["king"], "method": "mul",
         "vector_terms": "as_given", "k": 4},
        {"positive": ["king"], "negative": [{"vector": vector}], "method": "mul", "k": 4},
    ]  # fmt: skip
    batch = post(client, "analogy", {"queries": queries})
    NeighborsBatchResponse.model_validate(batch)
    for query, result in zip(queries, batch["results"], strict=True):
        assert result["neighbors"] == post(client, "analogy", query)["neighbors"]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"negative": ["man"], "method": "mul"}, "3CosMul does not"),
        ({"positive": [], "negative": []}, "give a positive term"),
        ({"method": "add"}, "give a positive term"),
        ({"positive": [{"token": "king", "weight": 2.0}], "method": "mul",
          "vector_terms": "as_given"}, "takes no weights"),
        ({"positive": ["king"], "vector_terms": "sideways"}, "unit"),
    ],
)  # fmt: skip
def test_analogies_that_cannot_combine_are_refused(client, body, words) -> None:
    for operation in ("analogy", "cosines"):
        response = client.post(f"{MINILM}/{operation}", json=body)
        assert words in assert_envelope(response, 422, "ValidationError")["message"]


def test_an_objective_past_float64_is_refused(app_of: AppOf) -> None:
    # 40 raw factors of about 1e15 each: their product is past float64's range.
    huge = {"vector": [1e15, 1e15, 1e15, 1e15]}
    body = {"positive": [huge] * 40, "method": "mul", "vector_terms": "as_given"}
    with app_of(max_terms=64) as client:
        response = client.post("/v1/tables/small/analogy", json={**body, "k": 3})
        assert "not finite" in assert_envelope(response, 422, "InvalidQuery")["message"]
        every = client.post("/v1/tables/small/cosines", json=body)  # float32 holds inf
        assert np.isinf(scores(every.json())).any()


@pytest.mark.parametrize("file", ["wordsim353.tsv", "simlex999.txt"])
def test_pairs_out_of_vocabulary_score_zero_as_in_gensim(client, keyed, file) -> None:
    text = Path(datapath(file)).read_text(encoding="utf-8")
    for restrict in (5000, 300_000):
        body = {"pairs": text, "restrict": restrict, "dummy4unknown": True}
        answer = post(client, "evaluate", body)
        pearson, spearman, oov = keyed.evaluate_word_pairs(
            datapath(file), restrict_vocab=restrict, dummy4unknown=True
        )
        assert answer["pearson"]["r"] == pytest.approx(pearson.statistic, abs=1e-6)
        assert answer["spearman"]["r"] == pytest.approx(spearman.statistic, abs=1e-6)
        assert answer["pearson"]["p_value"] == pytest.approx(pearson.pvalue, rel=1e-4)
        assert answer["oov_percent"] == pytest.approx(oov, abs=1e-12)
        skipped = post(client, "evaluate", {**body, "dummy4unknown": False})
        assert (
            answer["oov"] == skipped["oov"] and answer["pairs"] == skipped["pairs"] + answer["oov"]
        )
        assert answer["oov"] > (20 if restrict == 5000 else 0)


def question_sample(folder: Path) -> Path:
    """Every 9th question of each section of gensim's questions-words.txt."""
    lines, seen = [], 0
    for line in Path(datapath("questions-words.txt")).read_text(encoding="utf-8").splitlines():
        header = line.startswith(": ")
        if header or seen % 9 == 0:
            lines.append(line)
        seen += not header
    path = folder / "questions.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("dummy4unknown", [False, True])
@pytest.mark.parametrize("case_insensitive", [True, False])
def test_each_section_s_questions_are_gensim_s(
    client, keyed, tmp_path, dummy4unknown, case_insensitive
) -> None:
    path = question_sample(tmp_path)
    options = {"restrict": 8000, "case_insensitive": case_insensitive}
    body = {"analogies": path.read_text(encoding="utf-8"), "dummy4unknown": dummy4unknown}
    answer = post(client, "evaluate", {**body, **options, "questions": True})
    AnalogyEvaluationResponse.model_validate(answer)
    score, sections = keyed.evaluate_word_analogies(
        str(path), 8000, case_insensitive, dummy4unknown=dummy4unknown
    )
    assert len(answer["sections"]) == len(sections) - 1
    for ours, theirs in zip(answer["sections"], sections, strict=False):
        assert ours["section"] == theirs["section"]
        assert [tuple(q) for q in ours["questions"]["correct"]] == theirs["correct"]
        assert [tuple(q) for q in ours["questions"]["incorrect"]] == theirs["incorrect"]
    assert answer["total"]["accuracy"] == score and "questions" not in answer["total"]
    counted = answer["total"]["correct"] + answer["total"]["incorrect"]
    assert (counted == answer["questions"]) == dummy4unknown and answer["oov"] > 0
    without = post(client, "evaluate", {**body, **options})
    assert all("questions" not in section for section in without["sections"])


def test_an_answer_listing_questions_is_at_most_a_body_s_bytes(app_of: AppOf) -> None:
    text = ": s\n" + "king queen man woman\n" * 150  # 3.2 kB; listed, 4.6 kB
    with app_of(max_body_bytes=4096) as client:
        body = {"analogies": text, "questions": True}
        error = assert_envelope(client.post(f"{MINILM}/evaluate", json=body), 422, "LimitExceeded")
        assert error["limit"] == 4096 and error["got"] > 4096
        assert client.post(f"{MINILM}/evaluate", json={"analogies": text}).status_code == 200
        shorter = {"analogies": ": s\n" + "king queen man woman\n" * 100, "questions": True}
        assert len(client.post(f"{MINILM}/evaluate", json=shorter).content) <= 4096


def test_questions_of_a_pairs_evaluation_are_refused(client) -> None:
    body = {"pairs": "king\tqueen\t9\n", "questions": True}
    response = client.post(f"{MINILM}/evaluate", json=body)
    assert "analogy questions" in assert_envelope(response, 422, "ValidationError")["message"]
