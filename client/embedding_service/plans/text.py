"""Tokenize and detokenize plans: a text (or a batch of texts) to pieces, ids back to text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

import numpy as np

from embedding_service.decoding import decode, decode_list, decode_vector
from embedding_service.models.text import Detokenized, Piece, Tokenized, TokenizedWord
from embedding_service.plans import Answer, Plan, batched, body, merged_matched, one_call, post


# A str is a Sequence[str] too; the first overload that matches wins, as at run time.
@overload
def tokenize(  # type: ignore[overload-overlap]
    table: str,
    text: str,
    *,
    add_special_tokens: bool = False,
    include_vector: bool = False,
    word_initial: bool = True,
) -> Plan[Tokenized]: ...
@overload
def tokenize(
    table: str,
    text: Sequence[str],
    *,
    add_special_tokens: bool = False,
    include_vector: bool = False,
    word_initial: bool = True,
) -> Plan[list[Tokenized]]: ...
def tokenize(
    table: str,
    text: str | Sequence[str],
    *,
    add_special_tokens: bool = False,
    include_vector: bool = False,
    word_initial: bool = True,
) -> Plan[Tokenized] | Plan[list[Tokenized]]:
    """How the table's tokenizer splits a text (a list of texts is a batch): pieces and words.
    `word_initial=False` reads the text as a document's start, not a word (byte-level tables)."""
    options = body(
        add_special_tokens=add_special_tokens or None,
        word_initial=None if word_initial else False,
        include_vector=include_vector or None,
        encoding="base64" if include_vector else None,
    )
    if isinstance(text, str):
        call = post(table, "tokenize", {"text": text, **options})
        return one_call(call, lambda answer: _tokenized(answer, answer))

    return batched(post(table, "tokenize", options), "texts", list(text), _batch)


def _batch(answers: list[Answer]) -> list[Tokenized]:
    matched = merged_matched(answers)
    whole = {"matched": matched, "tokenizer": answers[0]["tokenizer"]}
    return [_tokenized(result, whole) for answer in answers for result in answer["results"]]


def _tokenized(result: Answer, whole: Answer) -> Tokenized:
    """One text's split; `whole` is the answer that says which tokenizer and what matched."""
    pieces = result["pieces"]
    vectors = None
    if pieces and "vector_b64" in pieces[0]:
        vectors = np.stack([decode_vector(piece["vector_b64"]) for piece in pieces])
    return Tokenized(
        text=result["text"],
        pieces=decode_list(Piece, pieces),
        words=decode_list(TokenizedWord, result["words"]),
        tokenizer=whole["tokenizer"],
        vectors=vectors,
        matched=whole.get("matched") or {},
    )


def detokenize(
    table: str, ids: Sequence[int], *, skip_special_tokens: bool = True
) -> Plan[Detokenized]:
    """Ids (rows) back to text through the model's decoder."""
    request = {"detokenize": [int(row) for row in ids], "skip_special_tokens": skip_special_tokens}
    call = post(table, "tokenize", request)
    return one_call(call, lambda answer: decode(Detokenized, answer))
