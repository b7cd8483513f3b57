"""Byte-level and SentencePiece tokens as the text they stand for."""

from __future__ import annotations

import pytest
from tokenizers import Tokenizer

from service.engine.tables.pieces import BYTE_LEVEL, PLAIN, SENTENCEPIECE, readable
from tests.language_models import byte_level_tokenizer


def test_every_complete_byte_level_token_reads_as_the_library_decodes_it() -> None:
    tokenizer = Tokenizer.from_str(byte_level_tokenizer())
    vocabulary = tokenizer.get_vocab(with_added_tokens=True)
    complete = 0
    for token, row in vocabulary.items():
        text, incomplete = readable(token, BYTE_LEVEL)
        if incomplete:
            assert "<0x" in text and "\ufffd" in tokenizer.decode([row])
        else:
            assert text == tokenizer.decode([row], skip_special_tokens=False), token
            complete += 1
    assert complete > len(vocabulary) * 0.9


@pytest.mark.parametrize(
    ("token", "style", "text", "incomplete"),
    [
        ("Ġrunning", BYTE_LEVEL, " running", False),
        ("running", BYTE_LEVEL, "running", False),
        ("âĢĻ", BYTE_LEVEL, "\u2019", False),
        ("âĢ", BYTE_LEVEL, "<0xE2><0x80>", True),
        ("Ġâ", BYTE_LEVEL, " <0xE2>", True),
        ("\u2581running", SENTENCEPIECE, " running", False),
        ("<0x41>", SENTENCEPIECE, "A", False),
        ("<0xE2>", SENTENCEPIECE, "<0xE2>", True),
        ("Ġrunning", PLAIN, "Ġrunning", False),
    ],
)
def test_readable(token: str, style: str, text: str, incomplete: bool) -> None:
    assert readable(token, style) == (text, incomplete)
