"""The real CLI as a subprocess: it serves over a socket, and fails fast on bad files."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from harness.server import free_port, running_server

pytestmark = pytest.mark.slow


def run_cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "service", *args],
        capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def call(url: str, body: dict | None = None) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """`python -m service serve` on the default table, on a free port."""
    with running_server() as base:
        yield base


def test_serves_the_default_table_over_a_socket(server: str) -> None:
    status, answer = call(f"{server}/v1/tables/minilm/neighbors", {"token": "king", "k": 2})
    assert status == 200
    assert [(n["token"], round(n["score"], 3)) for n in answer["neighbors"]] == [
        ("kings", 0.690),
        ("queen", 0.627),
    ]
    status, analogy = call(
        f"{server}/v1/tables/minilm/analogy",
        {"positive": ["king", "woman"], "negative": ["man"], "k": 1},
    )
    assert (analogy["neighbors"][0]["token"], round(analogy["neighbors"][0]["score"], 3)) == (
        "queen",
        0.502,
    )
    status, error = call(f"{server}/v1/tables/minilm/neighbors", {"token": "nosuchtokenx"})
    assert status == 404 and error["error"]["type"] == "UnknownToken"


def test_the_default_serve_embeds_texts_with_wordllama(server: str) -> None:
    body = {"model": "wordllama", "input": ["a cat sat on the mat", "a dog ran"]}
    status, answer = call(f"{server}/v1/embeddings", body)
    assert status == 200 and answer["model"] == "wordllama"
    assert [len(item["embedding"]) for item in answer["data"]] == [256, 256]
    vector = np.asarray(answer["data"][0]["embedding"])
    status, tei = call(f"{server}/embed", {"inputs": "a cat sat on the mat"})
    # TEI's route: the first static model served, normalised by default.
    assert status == 200
    np.testing.assert_allclose(tei[0], vector / np.linalg.norm(vector), rtol=0, atol=1e-6)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "no such file"),
        (b"3 2\nfoo 1 2\nbar 3 4\n", "truncated"),
        (b"2 2\nfoo 1 2\nfoo 3 4\n", "duplicate"),
        (b"2 2\nfoo 1 2\nbar nan 4\n", "non-finite"),
    ],
)
def test_a_bad_table_stops_start_up_with_one_clear_line(
    tmp_path: Path, content: bytes | None, problem: str
) -> None:
    path = tmp_path / "bad.txt"
    if content is not None:
        path.write_bytes(content)
    result = run_cli("serve", "--port", str(free_port()), "--table", f"bad={path}")
    assert result.returncode == 2
    lines = errors_of(result.stderr)
    assert len(lines) == 1, result.stderr
    assert str(path) in lines[0] and problem in lines[0].lower()


def errors_of(stderr: str) -> list[str]:
    """stderr less the start-up log's info lines: what went wrong, and nothing else."""
    return [line for line in stderr.strip().splitlines() if not line.startswith("INFO:")]


def test_info_describes_a_file(tmp_path: Path) -> None:
    np.save(tmp_path / "t.npy", np.eye(3, dtype=np.float32))
    (tmp_path / "t.vocab").write_text("a\nb\nc\n")
    result = run_cli("info", str(tmp_path / "t.npy"))
    assert result.returncode == 0, result.stderr
    facts = json.loads(result.stdout)
    assert (facts["rows"], facts["width"], facts["first_tokens"]) == (3, 3, ["a", "b", "c"])
    assert facts["head"] is None  # word vectors have no head (they were said to be "tied")


def test_info_reads_a_cut_fasttext_file_with_options(tmp_path: Path) -> None:
    path = tmp_path / "cut.vec"
    path.write_bytes(b"3 2\nok 1 2\ncaf\xc3 3 4\nlast 5 6\n")
    refused = run_cli("info", str(path))
    assert refused.returncode == 2 and "unicode_errors='replace'" in refused.stderr
    result = run_cli("info", str(path), "--unicode-errors", "replace", "--limit", "2")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["first_tokens"] == ["ok", "caf\ufffd"]


def test_one_shot_query_on_the_default_table() -> None:
    result = run_cli("query", "analogy", "king", "woman", "--negative", "man", "-k", "1")
    assert result.returncode == 0, result.stderr
    [best] = json.loads(result.stdout)["neighbors"]  # the HTTP answer's shape
    assert (best["token"], round(best["score"], 3)) == ("queen", 0.502)


def test_diagnose_prints_the_endpoints_report(server: str) -> None:
    printed = run_cli("diagnose", "--token", "king", "--suspects", "3")
    assert printed.returncode == 0, printed.stderr
    report = json.loads(printed.stdout)
    status, answer = call(
        f"{server}/v1/tables/minilm/diagnostics", {"tokens": ["king"], "limit": 3}
    )
    assert status == 200 and report == answer


def test_evaluate_prints_the_endpoints_figures(server: str, tmp_path: Path) -> None:
    pairs = "king\tqueen\t9\nman\twoman\t8\napple\tking\t1\nzzqq\tking\t2\n"
    (tmp_path / "pairs.tsv").write_text(pairs, encoding="utf-8")
    printed = run_cli("evaluate", "--pairs", str(tmp_path / "pairs.tsv"))
    assert printed.returncode == 0, printed.stderr
    status, answer = call(f"{server}/v1/tables/minilm/evaluate", {"pairs": pairs})
    assert status == 200 and json.loads(printed.stdout) == answer
    assert answer["pairs"] == 3 and answer["oov"] == 1


def test_diagnose_refuses_a_bad_pattern_in_one_line() -> None:
    printed = run_cli("diagnose", "--reference-pattern", "(a")
    assert printed.returncode == 2
    assert printed.stderr.strip().startswith("embedding-service: error: reference pattern")


def test_query_tokenize_prints_the_split() -> None:
    result = run_cli("query", "tokenize", "Embeddings are lookup tables")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["tokenizer"] == "huggingface"
    pieces = [piece["token"] for piece in answer["pieces"]]
    assert pieces == ["em", "##bed", "##ding", "##s", "are", "look", "##up", "tables"]
    assert [word["pieces"] for word in answer["words"]] == [4, 1, 2, 1]
