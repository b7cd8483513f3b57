"""Tokens as the text they stand for: byte-level BPE and SentencePiece pieces, readable.

GPT-2, Llama 3 and SmolLM write every byte of a piece as one printable character (GPT-2's
`bytes_to_unicode`: a space is `Ġ`, the UTF-8 of the right quote U+2019 is `âĢĻ`);
SentencePiece writes a space as `▁` and a byte it has no piece for as `<0xE2>`. `readable`
turns a token back into its text (" running", U+2019), and `written` a text into the token it
would be (" king" -> `Ġking`, `▁king`). A piece that holds only part of a
character's UTF-8 bytes has no text of its own: its lone bytes are written `<0xE2>`
(SentencePiece's own notation) and it is said to be incomplete, rather than shown as mojibake.
The API keeps the raw token as the key; the readable text is shown beside it.
"""

from __future__ import annotations

import codecs
import re
from functools import cache

BYTE_LEVEL = "byte-level"
SENTENCEPIECE = "sentencepiece"
PLAIN = "plain"
STYLES = (BYTE_LEVEL, SENTENCEPIECE, PLAIN)

_BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")
_ERRORS = "embedding-service-lone-bytes"


def _lone_bytes(error: UnicodeError) -> tuple[str, int]:
    assert isinstance(error, UnicodeDecodeError)
    lone = error.object[error.start : error.end]
    return "".join(f"<0x{byte:02X}>" for byte in lone), error.end


codecs.register_error(_ERRORS, _lone_bytes)


@cache
def byte_decoder() -> dict[str, int]:
    """GPT-2's printable character of each byte, inverted: character -> byte."""
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    characters = list(printable)
    shifted = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            characters.append(256 + shifted)
            shifted += 1
    return {chr(c): b for b, c in zip(printable, characters, strict=True)}


def readable(token: str, style: str) -> tuple[str, bool]:
    """(the text `token` stands for, whether it is an incomplete UTF-8 sequence)."""
    if style == BYTE_LEVEL:
        decoder = byte_decoder()
        if all(character in decoder for character in token):
            return _text_of(bytes(decoder[character] for character in token))
        return token, False  # an added token written as itself
    if style == SENTENCEPIECE:
        whole = _BYTE_TOKEN.fullmatch(token)
        if whole:
            return _text_of(bytes([int(whole.group(1), 16)]))
        return token.replace("\u2581", " "), False
    return token, False


@cache
def byte_encoder() -> dict[int, str]:
    """GPT-2's printable character of each byte: byte -> character."""
    return {byte: character for character, byte in byte_decoder().items()}


def written(text: str, style: str) -> str:
    """`text` as a token of `style` would write it: `readable`'s inverse on whole characters."""
    if style == BYTE_LEVEL:
        encoder = byte_encoder()
        return "".join(encoder[byte] for byte in text.encode("utf-8", "surrogatepass"))
    if style == SENTENCEPIECE:
        return text.replace(" ", "\u2581")
    return text


def _text_of(raw: bytes) -> tuple[str, bool]:
    text = raw.decode("utf-8", _ERRORS)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return text, True
    return text, False


def style_of_tokenizer(config: dict[str, object]) -> str:
    """How a tokenizer.json writes its pieces, from its pre-tokenizer and decoder."""
    described = repr({key: config.get(key) for key in ("pre_tokenizer", "decoder")})
    if "'ByteLevel'" in described:
        return BYTE_LEVEL
    if "'Metaspace'" in described or "\u2581" in described:
        return SENTENCEPIECE
    return PLAIN
