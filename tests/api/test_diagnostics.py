"""POST /diagnostics and /evaluate through the real app: answers, paging, counts, bad input."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient
from gensim.test.utils import datapath
from scipy import stats

from harness.lee_table import write_lee_table
from service.api.app import create_app
from service.config import Settings, TableSpec
from service.schemas.diagnostics import DiagnosticsResponse

MINILM = "/v1/tables/minilm"
EVEN_UNUSED = r"^\[unused\d*[02468]\]$"


@pytest.fixture(scope="module")
def lee(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The projector table with a count column (harness/lee_table.py)."""
    return write_lee_table(tmp_path_factory.mktemp("lee"))


@pytest.fixture(scope="module")
def odd_client(tmp_path_factory: pytest.TempPathFactory, lee: Path) -> Iterator[TestClient]:
    """Lee, a table of long tokens, a counts file, and a tight question limit."""
    folder = tmp_path_factory.mktemp("odd")
    tokens = ["a" * 30_000 + "!", "a" * 2_000, "two words", *(f"w{i}" for i in range(9))]
    np.save(folder / "long.npy", np.random.default_rng(1).normal(size=(12, 4)).astype("f4"))
    (folder / "long.vocab").write_text("\n".join(tokens) + "\n", encoding="utf-8")
    (folder / "counts.txt").write_text("w1 7\nw2 3\ntwo words\t5\n", encoding="utf-8")
    tables = [
        TableSpec(name="lee", path=lee),
        TableSpec(name="long", path=folder / "long.npy", counts=folder / "counts.txt"),
    ]
    settings = Settings(tables=tables, max_evaluation_questions=3, max_diagnostics_limit=50)
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def diagnose(client: TestClient, body: dict, table: str = "minilm") -> dict:
    response = client.post(f"/v1/tables/{table}/diagnostics", json=body)
    assert response.status_code == 200, response.text
    answer = response.json()
    parsed = DiagnosticsResponse.model_validate(answer).model_dump(mode="json", exclude_none=True)
    assert parsed == answer
    return answer


def test_default_reference_on_minilm(client: TestClient) -> None:
    answer = diagnose(client, {"tokens": ["king", "[unused7]"], "limit": 5})
    indicator = answer["indicator"]
    assert indicator["name"] == "reference_cosine" and indicator["reference_rows"] == 994
    assert answer["ranked_rows"] == 30522 - 994
    assert answer["suspect_count"] == int(0.02 * answer["ranked_rows"])
    assert len(answer["suspects"]) == 5
    cosines = [s["indicator"] for s in answer["suspects"]]
    assert cosines == sorted(cosines, reverse=True)
    king, unused = answer["tokens"]
    assert (king["suspect"], king["reference"]) == (False, False) and king["percentile"] > 50
    assert (unused["suspect"], unused["reference"]) == (True, True)
    assert set(answer["norms"]["percentiles"]) == {"1", "5", "25", "50", "75", "95", "99"}
    assert "counts" not in answer and "count" not in answer["suspects"][0]


def test_pages_are_slices_of_one_ranking(client: TestClient) -> None:
    whole = diagnose(client, {"reference": None, "limit": 30})["suspects"]
    pages = [diagnose(client, {"reference": None, "limit": 10, "offset": o}) for o in (0, 10, 20)]
    assert [s for page in pages for s in page["suspects"]] == whole
    last = diagnose(client, {"reference": None, "limit": 10, "offset": 10**9})
    assert last["suspects"] == []


def test_held_out_unused_rows_rank_first(client: TestClient) -> None:
    answer = diagnose(client, {"reference": {"pattern": EVEN_UNUSED}, "limit": 50})
    assert answer["indicator"]["reference_rows"] == 497
    top = [s["token"] for s in answer["suspects"]]
    assert sum(token.startswith("[unused") for token in top) >= 25  # odd N: held out
    by_tokens = {"tokens": [f"[unused{n}]" for n in range(0, 994, 2)]}
    same = diagnose(client, {"reference": by_tokens, "limit": 50})
    assert same["suspects"] == answer["suspects"]


def test_norm_indicator_on_request(client: TestClient) -> None:
    answer = diagnose(client, {"reference": None, "limit": 3, "tokens": ["[PAD]"]}, "small")
    assert answer["indicator"]["name"] == "norm"
    assert answer["norms"]["zero_rows"] == 1 and answer["norms"]["zero_tokens"] == ["[PAD]"]
    assert answer["tokens"][0]["suspect"] is True  # a zero row
    assert all(s["indicator"] == s["norm"] for s in answer["suspects"])


def test_count_figures_on_the_lee_table(odd_client: TestClient, lee: Path) -> None:
    answer = diagnose(odd_client, {"limit": 3}, "lee")
    assert answer["indicator"]["name"] == "norm"  # no unused tokens among whole words
    counts = answer["counts"]
    assert counts is not None and counts["column"] == "count" and counts["rows"] == 1657
    rows = lee.with_suffix(".tsv").read_text(encoding="utf-8").splitlines()[1:]
    count = np.array([int(line.split("\t")[1]) for line in rows])
    vectors = np.fromfile(lee, dtype="<f4").reshape(len(count), -1).astype(np.float64)
    expected = stats.spearmanr(np.log(count), np.linalg.norm(vectors, axis=1))
    assert counts["spearman_norm"]["rho"] == pytest.approx(expected.statistic, abs=1e-9)
    assert all(s["count"] == s["metadata"]["count"] for s in answer["suspects"])


def test_counts_file_becomes_the_count_column(odd_client: TestClient) -> None:
    answer = diagnose(odd_client, {"reference": None, "tokens": ["w1", "two words", "w4"]}, "long")
    assert [t["count"] for t in answer["tokens"]] == [7, 5, 0]
    assert answer["counts"]["rows"] == 3


def test_catastrophic_pattern_does_not_hang(odd_client: TestClient) -> None:
    # With Python's re this request would never end; RE2 answers it in linear time.
    response = odd_client.post(
        "/v1/tables/long/diagnostics", json={"reference": {"pattern": "(a+)+$"}}
    )
    assert response.status_code == 200
    assert response.json()["indicator"]["reference_sample"] == ["a" * 2_000]


@pytest.mark.parametrize(
    ("body", "status", "kind", "words"),
    [
        ({"tokens": ["king", "nosuchtokq"]}, 404, "UnknownToken", "'nosuchtokq'"),
        ({"reference": {"tokens": ["zzqq1"]}, "tokens": ["zzqq2"]}, 404, "UnknownToken", "zzqq1"),
        ({"reference": {"pattern": "(unclosed"}}, 422, "InvalidQuery", "missing )"),
        ({"reference": {"pattern": r"(a)\1"}}, 422, "InvalidQuery", "not a regular expression"),
        ({"reference": {"pattern": "^nosuchtokq$"}}, 422, "InvalidQuery", "matches no row"),
        ({"reference": {"pattern": "."}}, 422, "InvalidQuery", "more than half"),
        ({"fraction": 0}, 422, "ValidationError", "greater than 0"),
        ({"fraction": 0.51}, 422, "ValidationError", "less than or equal to 0.5"),
        ({"limit": 1001}, 422, "LimitExceeded", "diagnostics limit"),
        ({"tokens": ["king"] * 65}, 422, "LimitExceeded", "batch size"),
        ({"reference": {"pattern": "a" * 257}}, 422, "ValidationError", "at most 256"),
        ({"reference": "nearby"}, 422, "ValidationError", "reference"),
    ],
)
def test_bad_diagnostics_requests(client: TestClient, body, status, kind, words) -> None:
    response = client.post(f"{MINILM}/diagnostics", json=body)
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["type"] == kind and words in error["message"] + str(error.get("errors", ""))


def test_unknown_table_is_404(client: TestClient) -> None:
    response = client.post("/v1/tables/nosuch/diagnostics", json={})
    assert response.status_code == 404 and response.json()["error"]["type"] == "UnknownTable"
    response = client.post("/v1/tables/nosuch/evaluate", json={"builtin": "questions-words"})
    assert response.status_code == 404


def test_unknown_reference_and_named_tokens_are_named_together(client: TestClient) -> None:
    body = {"reference": {"tokens": ["zzqq1", "king"]}, "tokens": ["zzqq2"]}
    error = client.post(f"{MINILM}/diagnostics", json=body).json()["error"]
    assert set(error["tokens"]) == {"zzqq1", "zzqq2"}


def test_evaluate_builtin_and_sent_text_agree(client: TestClient) -> None:
    text = Path(datapath("questions-words.txt")).read_text(encoding="utf-8")
    sample = "\n".join(text.splitlines()[:60]) + "\n"
    sent = client.post(f"{MINILM}/evaluate", json={"analogies": sample, "restrict": 30000})
    assert sent.status_code == 200, sent.text
    answer = sent.json()
    assert answer["kind"] == "analogies" and answer["source"] == "request"
    assert (
        answer["questions"] == 59 and answer["sections"][0]["section"] == "capital-common-countries"
    )
    total = answer["total"]
    assert total["correct"] + total["incorrect"] + answer["oov"] == 59


def test_evaluate_pairs(client: TestClient) -> None:
    text = Path(datapath("wordsim353.tsv")).read_text(encoding="utf-8")
    answer = client.post(f"{MINILM}/evaluate", json={"pairs": text}).json()
    assert answer["kind"] == "pairs" and answer["pairs"] == 329
    assert answer["spearman"]["r"] == pytest.approx(0.7751843, abs=1e-6)


@pytest.mark.parametrize(
    ("body", "status", "kind", "words"),
    [
        ({"analogies": "a b c d\n"}, 422, "InvalidQuery", "line 1"),
        ({"pairs": "zzqq\tyyqq\t1\n"}, 422, "InvalidQuery", "need at least 3"),
        ({"pairs": "a\tb\t1\n", "analogies": ": x\n"}, 422, "ValidationError", "exactly one"),
        ({"builtin": "wordsim353"}, 422, "ValidationError", "questions-words"),
        ({"pairs": "x", "restrict": 0}, 422, "ValidationError", "greater than or equal to 1"),
    ],
)
def test_bad_evaluate_requests(client: TestClient, body, status, kind, words) -> None:
    response = client.post(f"{MINILM}/evaluate", json=body)
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["type"] == kind and words in error["message"]


def test_question_count_is_bounded(odd_client: TestClient) -> None:
    text = ": s\n" + "a b c d\n" * 4
    response = odd_client.post("/v1/tables/lee/evaluate", json={"analogies": text})
    assert response.status_code == 422
    assert response.json()["error"]["type"] == "LimitExceeded"
    response = odd_client.post("/v1/tables/lee/evaluate", json={"builtin": "questions-words"})
    assert response.status_code == 422


def test_suspect_rows_gauge(client: TestClient) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        lines = client.get("/metrics").text.splitlines()
        found = [line for line in lines if line.startswith("embedding_service_table_suspect_rows")]
        if any('table="minilm"' in line for line in found):
            break
        time.sleep(0.2)
    assert 'embedding_service_table_suspect_rows{table="minilm"} 590.0' in found
