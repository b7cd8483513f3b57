"""`query` takes its table as an option and answers exactly as the HTTP API.

Before, `terms nargs="+"` swallowed a table path as a token, a third similarity term was
dropped silently, one term ended in a traceback, and the answer was Session's tuples.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from service.cli import main as cli
from tests.robustness.conftest import write_table


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture()
def small_file(tmp_path: Path) -> Path:
    """The small test table (tokens King, king, queen, ...) as .npy + vocabulary."""
    from tests.conftest import small_vectors

    return write_table(tmp_path / "tables", small_vectors())


def test_query_answers_from_the_table_option(capsys, small_file: Path) -> None:
    status, out, err = run(
        capsys, "query", "neighbors", "king", "-k", "2", "--table", str(small_file)
    )
    assert status == 0, err
    tokens = [n["token"] for n in json.loads(out)["neighbors"]]
    assert len(tokens) == 2 and "king" not in tokens
    assert set(tokens) <= {"King", "queen", "man", "woman", "apple", "pear", "zero"}


def test_the_answer_is_the_http_answer(capsys, client: TestClient) -> None:
    status, out, _ = run(
        capsys, "query", "analogy", "king", "woman", "--negative", "man", "-k", "3"
    )
    body = {"positive": ["king", "woman"], "negative": ["man"], "k": 3, "method": "add"}
    assert status == 0
    assert json.loads(out) == client.post("/v1/tables/minilm/analogy", json=body).json()


def test_several_tokens_are_a_batch_in_order(capsys) -> None:
    status, out, _ = run(capsys, "query", "neighbors", "king", "queen", "-k", "1")
    assert status == 0
    [king, queen] = json.loads(out)["results"]
    assert king["neighbors"][0]["token"] == "kings" and queen["neighbors"][0]["token"] == "queens"


@pytest.mark.parametrize(
    "argv",
    [
        ["query", "similarity", "king"],  # one term: was a traceback
        ["query", "similarity", "king", "queen", "OTHER.bin"],  # a third: was dropped silently
        ["query", "neighbors"],  # nothing to look up
        ["query", "frobnicate", "king"],
    ],
)
def test_every_wrong_call_is_an_argparse_error(capsys, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    assert exit_.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_a_refused_query_is_one_line_naming_the_table(capsys, small_file: Path) -> None:
    status, out, err = run(capsys, "query", "neighbors", "plum", "--table", str(small_file))
    assert (status, out) == (2, "")
    assert err.strip() == "embedding-service: error: unknown token(s) in table 'small.npy': 'plum'"


def test_a_hint_is_given_in_command_line_terms_and_works(capsys, small_file: Path) -> None:
    """The command line was told to send {"text": "King"}, which no command takes: it is told
    which row to ask for, and asking for it answers."""
    status, _, err = run(capsys, "query", "neighbors", "King", "-k", "1")
    assert status == 2 and 'send {"text"' not in err
    assert err.endswith("(the table's tokenizer reads 'King' as the row 'king': ask for 'king')\n")
    assert run(capsys, "query", "neighbors", "king", "-k", "1")[0] == 0
    status, _, err = run(capsys, "query", "neighbors", "QUEEN", "--table", str(small_file))
    assert status == 2 and "serve the table" not in err
    assert "'QUEEN' is 'queen' in another case: ask for 'queen', or name the table as " in err
    spec = f"small={small_file},case_insensitive=true"
    status, out, err = run(capsys, "query", "neighbors", "QUEEN", "-k", "1", "--table", spec)
    assert status == 0 and json.loads(out)["matched"] == {"QUEEN": "queen"}, err
