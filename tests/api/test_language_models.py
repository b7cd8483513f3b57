"""Language-model tables over HTTP: /score on the right head, padding, the size table."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient
from tokenizers import Tokenizer

from service.api.app import create_app
from service.config import Settings, TableSpec
from service.loading.tables import load_registry
from service.schemas.ranking import CosinesResponse, RankResponse
from service.schemas.tables import TableInfo
from service.schemas.vectors import ScoreResponse
from tests.language_models import (
    LLAMA_HEAD,
    PADDED_ROWS,
    TOKENS,
    WIDTH,
    Model,
    byte_level_tokenizer,
    write_gpt2,
    write_llama,
)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Model]:
    folder = tmp_path_factory.mktemp("models")
    return {"llama": write_llama(folder / "llama"), "gpt2": write_gpt2(folder / "gpt2")}


@pytest.fixture(scope="module")
def client(models: dict[str, Model]) -> Iterator[TestClient]:
    specs = [TableSpec(name=name, path=model.folder) for name, model in models.items()]
    settings = Settings(tables=specs, max_k=PADDED_ROWS)
    with TestClient(create_app(settings, load_registry(settings))) as test_client:
        yield test_client


def post(client: TestClient, table: str, operation: str, body: dict) -> dict:
    response = client.post(f"/v1/tables/{table}/{operation}", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def every_logit(client: TestClient, table: str, vector: np.ndarray) -> np.ndarray:
    """The answer's logits of every row, in row order."""
    encoded = base64.b64encode(vector.astype("<f4").tobytes()).decode()
    answer = post(client, table, "score", {"vector_b64": encoded, "k": PADDED_ROWS})
    ScoreResponse.model_validate(answer)
    logits = np.full(PADDED_ROWS, np.nan)
    for entry in answer["top"]:
        logits[entry["id"]] = entry["logit"]
    return logits[: len(answer["top"])]


def test_untied_score_is_the_head_times_the_vector(
    client: TestClient, models: dict[str, Model]
) -> None:
    llama = models["llama"]
    assert llama.head is not None
    vector = np.random.default_rng(5).normal(size=WIDTH).astype(np.float32)
    logits = every_logit(client, "llama", vector)
    expected = llama.head.astype(np.float64) @ vector.astype(np.float64)
    np.testing.assert_allclose(logits, expected, rtol=1e-12, atol=1e-12)
    from_input = llama.rows.astype(np.float64) @ vector.astype(np.float64)
    assert np.abs(logits - from_input).max() > 1.0
    encoded = base64.b64encode(vector.astype("<f4").tobytes()).decode()
    assert post(client, "llama", "score", {"vector_b64": encoded})["head"] == LLAMA_HEAD


def test_tied_score_is_the_rows_times_the_vector(
    client: TestClient, models: dict[str, Model]
) -> None:
    gpt2 = models["gpt2"]
    vector = np.random.default_rng(6).normal(size=WIDTH).astype(np.float32)
    logits = every_logit(client, "gpt2", vector)
    assert logits.size == TOKENS
    expected = gpt2.rows.astype(np.float64) @ vector.astype(np.float64)
    np.testing.assert_allclose(logits, expected, rtol=1e-12, atol=1e-12)
    answer = post(client, "gpt2", "score", {"text": " the", "k": 1})
    assert answer["head"] == "tied"


def test_padding_rows_answer_only_a_restrict_that_reaches_them(
    client: TestClient, models: dict[str, Model]
) -> None:
    padding = [f"<row {row}>" for row in range(TOKENS, PADDED_ROWS)]
    # A padding row's own nearest rows, by default all tokens, never other padding rows.
    answer = post(client, "llama", "neighbors", {"token": padding[0], "k": TOKENS})
    ids = [entry["id"] for entry in answer["neighbors"]]
    assert len(ids) == TOKENS and max(ids) < TOKENS
    asked = post(
        client,
        "llama",
        "neighbors",
        {"token": padding[0], "k": PADDED_ROWS, "restrict": PADDED_ROWS},
    )
    found = {entry["token"] for entry in asked["neighbors"]}
    assert set(padding[1:]) <= found
    lookup = post(client, "llama", "lookup", {"tokens": padding[:1], "include_vector": False})
    assert lookup["items"][0]["metadata"] == {"token_type": "padding"}


def test_padding_rows_are_diagnostics_references(client: TestClient) -> None:
    answer = post(client, "llama", "diagnostics", {"tokens": ["<row 3001>"], "limit": 1})
    assert answer["indicator"]["reference_rows"] == PADDED_ROWS - TOKENS
    assert "the model's 8 padding rows" in answer["indicator"]["why"]
    assert answer["tokens"][0]["reference"] is True


def test_the_size_table_of_each_model(client: TestClient, models: dict[str, Model]) -> None:
    llama = TableInfo.model_validate(client.get("/v1/tables/llama").json())
    assert llama.head == LLAMA_HEAD
    assert llama.model is not None
    total = models["llama"].total_parameters
    assert (llama.model.vocabulary, llama.model.padding_rows) == (TOKENS, PADDED_ROWS - TOKENS)
    assert llama.model.embedding_parameters == llama.model.output_parameters == PADDED_ROWS * WIDTH
    assert llama.model.total_parameters == total
    assert llama.model.embedding_share == PADDED_ROWS * WIDTH / total
    assert llama.model.widened == "bfloat16 rows widened once to float32"
    gpt2 = TableInfo.model_validate(client.get("/v1/tables/gpt2").json())
    assert gpt2.head == "tied" and gpt2.model is not None
    assert gpt2.model.output_parameters is None and gpt2.model.output_share is None
    assert gpt2.model.total_parameters == models["gpt2"].total_parameters
    assert gpt2.model.embedding_parameters == TOKENS * WIDTH


def test_a_prepared_folder_keeps_the_head_and_facts(
    models: dict[str, Model], tmp_path: Path
) -> None:
    from service.engine.loaders import load_table
    from service.engine.tables.prepared import open_prepared, write_prepared

    table = load_table(models["llama"].folder)
    opened = open_prepared(write_prepared(table, tmp_path / "prepared"))
    assert opened.output is not None and table.output is not None
    np.testing.assert_array_equal(opened.output, table.output)
    assert opened.model == table.model
    assert opened.tokenizer is not None
    assert opened.tokenizer.split(" the").ids == table.tokenizer.split(" the").ids  # type: ignore[union-attr]


def test_byte_level_pieces_are_readable_beside_the_raw_token(client: TestClient) -> None:
    texts = [" running", "running", "it\u2019s"]
    answer = post(client, "llama", "tokenize", {"texts": texts, "word_initial": False})
    spaced, bare, quoted = answer["results"]
    assert [(p["token"], p["text"]) for p in spaced["pieces"]] == [("Ġrunning", " running")]
    assert spaced["words"][0]["one_row"] is True
    # At a document's start it is other rows: the model's own split, never " running"'s row.
    assert spaced["pieces"][0]["id"] not in [p["id"] for p in bare["pieces"]]
    assert "".join(p["text"] for p in bare["pieces"]) == "running"
    # A word alone is word-initial: " running"'s row, its offsets the word's own.
    [word] = post(client, "llama", "tokenize", {"text": "running"})["pieces"]
    assert (word["id"], word["start"], word["end"]) == (spaced["pieces"][0]["id"], 0, 7)
    # The quote's three bytes are three pieces here: each only part of the character.
    partial = [p for p in quoted["pieces"] if p.get("incomplete")]
    assert [p["token"] for p in partial] == ["â", "Ģ", "Ļ"]
    assert [p["text"] for p in partial] == ["<0xE2>", "<0x80>", "<0x99>"]


def test_neighbours_and_score_rows_are_readable(client: TestClient) -> None:
    library = Tokenizer.from_str(byte_level_tokenizer())
    answer = post(client, "gpt2", "neighbors", {"token": "Ġthe", "k": 20})
    complete = [entry for entry in answer["neighbors"] if "incomplete" not in entry]
    assert complete
    for entry in complete:
        assert entry["text"] == library.decode([entry["id"]]), entry
    top = post(client, "llama", "score", {"text": " the", "k": 3})["top"]
    assert all("text" in entry for entry in top)


def test_cosines_and_ranks_count_padding_rows_as_gensim_holds_them(client: TestClient) -> None:
    padding = f"<row {TOKENS}>"
    every = post(client, "llama", "cosines", {"token": "Ġthe"})
    CosinesResponse.model_validate(every)
    assert every["count"] == PADDED_ROWS  # the padding rows too, as in gensim's array
    scores = np.frombuffer(base64.b64decode(every["scores_b64"]), dtype="<f4")
    answer = post(client, "llama", "rank", {"token": "Ġthe", "others": [padding]})
    RankResponse.model_validate(answer)
    [item] = answer["ranks"]
    assert item["closer"] == np.count_nonzero(scores > scores[TOKENS]) - 1  # less Ġthe's own
    listed = post(client, "gpt2", "rank", {"token": "Ġthe", "others": ["Ġa"], "closer_rows": {}})
    items = [*listed["ranks"], *listed["closer_rows"]]
    assert all("text" in entry for entry in items)  # readable, as the neighbours are
