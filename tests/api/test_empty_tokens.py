"""A row whose token is "" is found by its key, as gensim finds it on the same file.

Such rows are real: a word2vec text line that begins with a space, a token whose bytes
`unicode_errors="ignore"` drops. They were reachable by id only: every query refused "" (422).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from gensim.models import KeyedVectors

from service.api.app import create_app
from service.config import Settings, TableSpec

# gensim scores in float32, the service in float64: they agree to this.
TOLERANCE = 1e-5
ROWS = np.random.default_rng(7).normal(size=(6, 5)).astype(np.float32)
WORDS = [b"", b"king", b"queen", b"man", b"woman", b"apple"]


def write_text(path: Path) -> Path:
    """word2vec text whose first line's token is empty (the line begins with a space)."""
    lines = [f"{len(ROWS)} {ROWS.shape[1]}"]
    for word, row in zip(WORDS, ROWS, strict=True):
        lines.append(word.decode() + " " + " ".join(f"{value:.6f}" for value in row))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_binary(path: Path) -> Path:
    """word2vec binary whose first token is two bytes that are not UTF-8 (read with ignore)."""
    with path.open("wb") as out:
        out.write(f"{len(ROWS)} {ROWS.shape[1]}\n".encode())
        for word, row in zip([b"\xff\xfe", *WORDS[1:]], ROWS, strict=True):
            out.write(word + b" " + row.astype("<f4").tobytes() + b"\n")
    return path


@pytest.fixture(params=["text", "binary"])
def table(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[TestClient, Any]]:
    """A client serving the file, and gensim's KeyedVectors of the same file."""
    if request.param == "text":
        path, options = write_text(tmp_path / "empty.txt"), {}
        gensim = KeyedVectors.load_word2vec_format(str(path))
    else:
        path, options = write_binary(tmp_path / "empty.bin"), {"unicode_errors": "ignore"}
        gensim = KeyedVectors.load_word2vec_format(str(path), binary=True, **options)
    assert "" in gensim.key_to_index
    settings = Settings(tables=[TableSpec(name="t", path=path, **options)])
    with TestClient(create_app(settings)) as client:
        yield client, gensim


def post(client: TestClient, operation: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = client.post(f"/v1/tables/t/{operation}", json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_the_empty_token_is_found_by_its_key_as_gensim_finds_it(table: Any) -> None:
    client, gensim = table
    [item] = post(client, "lookup", {"tokens": [""]})["items"]
    assert item["id"] == gensim.key_to_index[""] and item["vector"] == gensim[""].tolist()
    found = post(client, "neighbors", {"token": "", "k": 3})["neighbors"]
    expected = gensim.most_similar("", topn=3)
    assert [n["token"] for n in found] == [key for key, _ in expected]
    scores = [n["score"] for n in found]
    np.testing.assert_allclose(scores, [s for _, s in expected], atol=TOLERANCE)
    [pair] = post(client, "similarity", {"pairs": [["", "king"]]})["pairs"]
    assert pair["score"] == pytest.approx(gensim.similarity("", "king"), abs=TOLERANCE)
    analogy = post(client, "analogy", {"positive": ["", "woman"], "negative": ["man"], "k": 1})
    [(key, score)] = gensim.most_similar(positive=["", "woman"], negative=["man"], topn=1)
    assert analogy["neighbors"][0]["token"] == key
    assert analogy["neighbors"][0]["score"] == pytest.approx(score, abs=TOLERANCE)


def test_the_empty_token_is_unknown_where_no_row_has_it(tmp_path: Path) -> None:
    path = write_text(tmp_path / "empty.txt")
    path.write_text(path.read_text(encoding="utf-8").replace("\n ", "\nnone ", 1))
    assert "" not in KeyedVectors.load_word2vec_format(str(path)).key_to_index
    with TestClient(create_app(Settings(tables=[TableSpec(name="t", path=path)]))) as client:
        answer = client.post("/v1/tables/t/neighbors", json={"token": ""})
    assert answer.status_code == 404 and answer.json()["error"]["tokens"] == [""]
