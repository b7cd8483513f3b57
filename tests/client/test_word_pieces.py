"""The client's tokenize on a byte-level table: a word as the word's row, or, asked, as the
model reads the start of a document."""

from __future__ import annotations

import json
from pathlib import Path

from tokenizers import Tokenizer

from embedding_service import Client
from harness.server import running_server
from tests.language_models import byte_level_tokenizer, write_gpt2


def test_tokenize_reads_a_word_or_a_documents_start(tmp_path: Path) -> None:
    tables = json.dumps([{"name": "gpt2", "path": str(write_gpt2(tmp_path / "gpt2").folder)}])
    library = Tokenizer.from_str(byte_level_tokenizer())
    with running_server({"EMBEDDING_SERVICE_TABLES": tables}) as base, Client(base) as client:
        word = client.tokenize("gpt2", "said")
        assert [piece.token for piece in word.pieces] == library.encode(" said").tokens
        start = client.tokenize("gpt2", ["said"], word_initial=False)[0]
        assert [piece.token for piece in start.pieces] == library.encode("said").tokens
        assert len(start.pieces) > len(word.pieces) == 1
