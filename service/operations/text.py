"""Answering /tokenize: text -> the table's pieces (ids, offsets, words), and ids -> text.

Splitting and writing the answer run on a worker thread: a request may carry max_text_length
characters (10,000 by default: about 8 ms of splitting), which the event loop should not spend.
"""

from __future__ import annotations

from typing import Any

from service.engine.errors import UnknownToken
from service.engine.served import ServedTable
from service.engine.tables.table import EmbeddingTable
from service.engine.tables.text import Split
from service.metrics import timed
from service.operations.answers import add_readable, add_vector, dumps
from service.operations.context import Context
from service.schemas.text import TokenizeRequest


async def tokenize(body: TokenizeRequest, context: Context) -> bytes:
    """The JSON answer to a tokenize request: one text, a batch of texts, or a detokenize."""
    served, limits = context.served, context.limits
    if body.detokenize is not None:
        limits.check_detokenize(len(body.detokenize))
        ids = served.table.check_ids(body.detokenize).tolist()
        text = await context.runtime.in_thread(served.text.decode, ids, body.skip_special_tokens)
        return dumps({"tokenizer": served.text.kind, "ids": ids, "text": text})
    texts = [body.text] if body.text is not None else list(body.texts or [])
    limits.check_batch(len(texts))
    limits.check_text_length(sum(len(text) for text in dict.fromkeys(texts)))

    def write() -> bytes:
        with timed("tokenize"):
            splits = split_all(served, texts, body.add_special_tokens, body.word_initial)
            encoding = body.encoding if body.include_vector else None
            if encoding is not None:
                limits.check_piece_vectors(sum(len(split.ids) for split in splits))
            results = [split_payload(served.table, split, encoding) for split in splits]
        matched = {word: token for split in splits for word, token in split.matched.items()}
        answer = {"matched": matched, "tokenizer": served.text.kind}
        if body.text is not None:
            return dumps({**answer, **results[0]})
        return dumps({**answer, "results": results})

    return await context.runtime.in_thread(write)


def split_all(
    served: ServedTable, texts: list[str], add_special_tokens: bool, word_initial: bool
) -> list[Split]:
    """Every text split (each distinct text once); UnknownToken names every unknown word."""
    splits: dict[str, Split] = {}
    unknown: list[str] = []
    for text in dict.fromkeys(texts):
        try:
            splits[text] = served.text.split(text, add_special_tokens, word_initial)
        except UnknownToken as error:  # a word table's words that are not tokens
            unknown.extend(error.details["tokens"])
    if unknown:
        raise UnknownToken(list(dict.fromkeys(unknown)), served.name)
    return [splits[text] for text in texts]


def split_payload(table: EmbeddingTable, split: Split, encoding: str | None) -> dict[str, Any]:
    """{"text", "pieces", "words"} for one split text; with `encoding`, each piece's row."""
    pieces = []
    for row, (start, end), word in zip(split.ids, split.offsets, split.words, strict=True):
        piece: dict[str, Any] = {"token": table.tokens[row], "id": row, "start": start, "end": end}
        if word is not None:
            piece["word"] = word
        add_vector(piece, table.vectors[row], encoding)
        pieces.append(piece)
    add_readable(table, pieces)
    words = [
        {
            "word": word.index,
            "text": split.text[word.start : word.end],
            "start": word.start,
            "end": word.end,
            "pieces": word.pieces,
            "one_row": word.pieces == 1,
        }
        for word in split.word_spans()
    ]
    return {"text": split.text, "pieces": pieces, "words": words}
