"""POST /tokenize: text -> the table's pieces and words, ids -> text, within the limits."""

from __future__ import annotations

import base64

import numpy as np
import pytest
from tokenizers import Tokenizer

from service.config import default_table
from tests.robustness.conftest import assert_envelope

MINILM = "/v1/tables/minilm/tokenize"
SMALL = "/v1/tables/small/tokenize"


def tokenize(client, body: dict, path: str = MINILM) -> dict:
    response = client.post(path, json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_the_seeds_sentence(client) -> None:
    answer = tokenize(client, {"text": "Embeddings are lookup tables"})
    assert answer["tokenizer"] == "huggingface"
    pieces = ["em", "##bed", "##ding", "##s", "are", "look", "##up", "tables"]
    assert [p["token"] for p in answer["pieces"]] == pieces
    assert [p["word"] for p in answer["pieces"]] == [0, 0, 0, 0, 1, 2, 2, 3]
    words = [(w["text"], w["pieces"], w["one_row"]) for w in answer["words"]]
    assert words == [
        ("Embeddings", 4, False),
        ("are", 1, True),
        ("lookup", 2, False),
        ("tables", 1, True),
    ]


def test_ids_and_offsets_are_the_tokenizer_files(client) -> None:
    reference = Tokenizer.from_file(str(default_table().path / "tokenizer.json"))
    reference.no_padding()
    text = "Is 'running' one embedding row or two? Unbelievably, it depends."
    answer = tokenize(client, {"text": text, "add_special_tokens": True})
    expected = reference.encode(text)  # with [CLS] ... [SEP], as asked
    assert [p["id"] for p in answer["pieces"]] == expected.ids
    assert [(p["start"], p["end"]) for p in answer["pieces"]] == expected.offsets
    assert [p.get("word") for p in answer["pieces"]] == expected.word_ids
    assert [p["token"] for p in answer["pieces"]] == expected.tokens


def test_one_row_or_several(client) -> None:
    answer = tokenize(client, {"texts": ["running", "unbelievably"]})
    running, unbelievably = (result["words"][0] for result in answer["results"])
    assert (running["pieces"], running["one_row"]) == (1, True)
    assert (unbelievably["pieces"], unbelievably["one_row"]) == (5, False)


def test_vectors_are_the_rows(client, minilm) -> None:
    for encoding in ("float", "base64"):
        body = {"text": "lookup", "include_vector": True, "encoding": encoding}
        for piece in tokenize(client, body)["pieces"]:
            if encoding == "float":
                vector = np.asarray(piece["vector"], dtype=np.float32)
            else:
                vector = np.frombuffer(base64.b64decode(piece["vector_b64"]), dtype="<f4")
            np.testing.assert_array_equal(vector, minilm.vectors[piece["id"]])


@pytest.mark.parametrize("text", ["embeddings are lookup tables", "is running one row or two"])
def test_detokenize_inverts_tokenize(client, text: str) -> None:
    ids = [p["id"] for p in tokenize(client, {"text": text})["pieces"]]
    answer = tokenize(client, {"detokenize": ids})
    assert answer == {"tokenizer": "huggingface", "ids": ids, "text": text}


def test_detokenize_keeps_special_tokens_when_asked(client) -> None:
    ids = [
        p["id"] for p in tokenize(client, {"text": "king", "add_special_tokens": True})["pieces"]
    ]
    assert tokenize(client, {"detokenize": ids})["text"] == "king"
    kept = tokenize(client, {"detokenize": ids, "skip_special_tokens": False})
    assert kept["text"] == "[CLS] king [SEP]"


def test_a_word_table_answers_by_vocabulary(client) -> None:
    answer = tokenize(client, {"text": " KING\tqueen  pear"}, SMALL)
    assert answer["tokenizer"] == "vocabulary"
    assert [(p["token"], p["id"], p["start"], p["end"]) for p in answer["pieces"]] == [
        ("King", 1, 1, 5),
        ("queen", 3, 6, 11),
        ("pear", 7, 13, 17),
    ]
    assert answer["matched"] == {"KING": "King"}  # the table's case fallback
    assert all(word["one_row"] for word in answer["words"])
    assert tokenize(client, {"detokenize": [1, 3]}, SMALL)["text"] == "King queen"


def test_a_word_tables_unknown_words_are_all_named(client) -> None:
    response = client.post(SMALL, json={"texts": ["king plum", "fig queen plum"]})
    assert assert_envelope(response, 404, "UnknownToken")["tokens"] == ["plum", "fig"]


def test_whitespace_has_no_pieces(client) -> None:
    assert tokenize(client, {"text": " \t "}) | {"tokenizer": None} == {
        "matched": {},
        "tokenizer": None,
        "text": " \t ",
        "pieces": [],
        "words": [],
    }


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        ({"text": ""}, 422, "ValidationError"),
        ({"texts": []}, 422, "ValidationError"),
        ({}, 422, "ValidationError"),
        ({"text": "a", "detokenize": [1]}, 422, "ValidationError"),
        ({"text": "x" * 10_001}, 422, "LimitExceeded"),
        ({"texts": ["x" * 6_000, "y" * 6_000]}, 422, "LimitExceeded"),  # summed
        ({"texts": ["a"] * 65}, 422, "LimitExceeded"),  # max_batch is 64 here
        ({"text": "a " * 65, "include_vector": True}, 422, "LimitExceeded"),  # 65 rows
        ({"detokenize": [1] * 10_001}, 422, "LimitExceeded"),
        ({"detokenize": [30_522]}, 404, "UnknownId"),
    ],
)
def test_refusals(client, body: dict, status: int, error: str) -> None:
    assert_envelope(client.post(MINILM, json=body), status, error)


def test_the_same_text_twice_counts_once(client) -> None:
    answer = tokenize(client, {"texts": ["x" * 6_000, "x" * 6_000]})
    assert len(answer["results"]) == 2


def test_non_utf8_is_malformed_json(client) -> None:
    for content in (b'{"text": "a\xffb"}', b'{"text": "a\\ud800b"}'):
        response = client.post(
            MINILM, content=content, headers={"content-type": "application/json"}
        )
        assert_envelope(response, 400, "MalformedJSON")
