"""Over HTTP, a typed word on a language model's table is the word's own row (`Ġyear`), said in
"matched"; the piece of the same letters that ends a word stays reachable as a token."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from tokenizers import Tokenizer

from service.api.app import create_app
from service.config import Settings, TableSpec
from service.loading.tables import load_registry
from service.schemas.search import NeighborsResponse
from service.schemas.text import TokenizeResponse
from tests.api.test_language_models import post
from tests.language_models import byte_level_tokenizer, smollm2, write_gguf, write_gpt2


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder = tmp_path_factory.mktemp("models")
    specs = [
        TableSpec(name="gpt2", path=write_gpt2(folder / "gpt2").folder),
        TableSpec(name="llama", path=write_gguf(folder / "llama.gguf", model="llama").folder),
    ]
    settings = Settings(tables=specs)
    with TestClient(create_app(settings, load_registry(settings))) as test_client:
        yield test_client


def neighbours(answer: dict) -> list[str]:
    return [neighbour["token"] for neighbour in answer["neighbors"]]


@pytest.mark.parametrize(("table", "space"), [("gpt2", "Ġ"), ("llama", "\u2581")])
def test_a_word_is_the_row_that_starts_a_word(client: TestClient, table: str, space: str) -> None:
    by_text = post(client, table, "neighbors", {"text": "year", "k": 5})
    NeighborsResponse.model_validate(by_text)
    assert by_text["matched"] == {"year": space + "year"}
    by_token = post(client, table, "neighbors", {"token": space + "year", "k": 5})
    assert neighbours(by_text) == neighbours(by_token)


def test_the_piece_that_ends_a_word_stays_a_token(client: TestClient) -> None:
    vocabulary = Tokenizer.from_str(byte_level_tokenizer()).get_vocab()
    looked_up = post(client, "gpt2", "lookup", {"tokens": ["year", {"text": "year"}]})
    assert [item["id"] for item in looked_up["items"]] == [vocabulary["year"], vocabulary["Ġyear"]]
    assert looked_up["matched"] == {"year": "Ġyear"}


def test_tokenize_reads_a_word_as_text_queries_do(client: TestClient) -> None:
    library = Tokenizer.from_str(byte_level_tokenizer())
    word = post(client, "gpt2", "tokenize", {"text": "said"})
    TokenizeResponse.model_validate(word)
    assert [piece["token"] for piece in word["pieces"]] == ["Ġsaid"]
    assert word["pieces"][0] | {"text": " said"} == word["pieces"][0]
    assert (word["pieces"][0]["start"], word["pieces"][0]["end"]) == (0, 4)
    assert word["words"][0]["one_row"] is True
    start = post(client, "gpt2", "tokenize", {"text": "said", "word_initial": False})
    assert [piece["token"] for piece in start["pieces"]] == library.encode("said").tokens
    assert start["words"][0]["one_row"] is False


def test_analogy_terms_are_words(client: TestClient) -> None:
    texts = {"positive": [{"text": "year"}, {"text": "work"}], "negative": [{"text": "said"}]}
    tokens = {"positive": ["Ġyear", "Ġwork"], "negative": ["Ġsaid"]}
    by_text = post(client, "gpt2", "analogy", {**texts, "k": 5})
    assert by_text["matched"] == {"year": "Ġyear", "work": "Ġwork", "said": "Ġsaid"}
    assert neighbours(by_text) == neighbours(post(client, "gpt2", "analogy", {**tokens, "k": 5}))


@pytest.mark.slow
def test_smollm2_king_is_the_word() -> None:
    """SmolLM2 as it ships: "king" answers from `Ġking` (ĠKing, King, Ġkings); the piece `king`
    (the end of "s|king": ked, ks, kers) only when asked for as a token."""
    settings = Settings(tables=[TableSpec(name="smollm2", path=smollm2())])
    with TestClient(create_app(settings, load_registry(settings))) as client:
        word = post(client, "smollm2", "neighbors", {"text": "king", "k": 3})
        assert word["matched"] == {"king": "Ġking"}
        assert neighbours(word) == ["ĠKing", "King", "Ġkings"]
        assert [n["text"] for n in word["neighbors"]] == [" King", "King", " kings"]
        piece = post(client, "smollm2", "neighbors", {"token": "king", "k": 3})
        assert neighbours(piece) == ["ked", "ks", "kers"]
        terms = {"positive": [{"text": "king"}, {"text": "woman"}], "negative": [{"text": "man"}]}
        analogy = post(client, "smollm2", "analogy", {**terms, "k": 1})
        assert neighbours(analogy) == ["Ġqueen"]
