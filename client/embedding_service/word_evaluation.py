"""gensim's evaluate_word_analogies and evaluate_word_pairs for a RemoteKeyedVectors.

Both files are read here as gensim reads them (gensim's errors for a question before any section
or a file without questions; a pair file's delimiter and encoding) and sent to the service's
/evaluate, which answers gensim's figures: for analogies each section's correct and incorrect
questions (`questions: true`), in chunks small enough for the server's limits, each chunk's
sections named by their index so the answers fall back into place; for word pairs Pearson and
Spearman with scipy's p-values (the client cannot import scipy).
"""

from __future__ import annotations

import bz2
import gzip
import itertools
import os
from collections.abc import Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any, NamedTuple

from embedding_service.batching import Chunks, Limits
from embedding_service.errors import BodyTooLarge, LimitExceeded

if TYPE_CHECKING:
    from embedding_service.keyedvectors import RemoteKeyedVectors

Section = dict[str, Any]
# A well-formed question line of the file, with the index of its section.
Entry = tuple[int, str]


class Correlation(NamedTuple):
    """A correlation and its two-sided p-value, unpacked as scipy's results are."""

    statistic: float
    pvalue: float


def evaluate_word_analogies(
    kv: RemoteKeyedVectors,
    analogies: str | os.PathLike[str],
    restrict_vocab: int,
    case_insensitive: bool,
    dummy4unknown: bool,
) -> tuple[float, list[Section]]:
    """(accuracy over every counted question, sections then their total), as gensim."""
    sections, entries = _read_questions(analogies)
    chunks = Chunks(entries, Limits(len(entries)))  # the whole file, unless the server refuses
    while (chunk := chunks.next()) is not None:
        try:
            answer = kv.client.evaluate(
                kv.table,
                analogies=_chunk_text(chunk),
                restrict=restrict_vocab,
                case_insensitive=case_insensitive,
                dummy4unknown=dummy4unknown,
                questions=True,
            )
        except (LimitExceeded, BodyTooLarge) as error:  # more questions or bytes than allowed
            chunks.refused(error, len(chunk))
            continue
        for score in answer.sections:
            if score.questions is not None:
                section = sections[int(score.section)]
                section["correct"] += score.questions.correct
                section["incorrect"] += score.questions.incorrect
        chunks.answered(len(chunk))
    total = {
        "section": "Total accuracy",
        "correct": list(itertools.chain.from_iterable(s["correct"] for s in sections)),
        "incorrect": list(itertools.chain.from_iterable(s["incorrect"] for s in sections)),
    }
    sections.append(total)
    return _accuracy(total), sections


def _read_questions(analogies: str | os.PathLike[str]) -> tuple[list[Section], list[Entry]]:
    """The file's sections (still empty) and every well-formed question line with its
    section's index."""
    sections: list[Section] = []
    entries: list[Entry] = []
    with _open(analogies, "rb") as lines:
        for number, raw in enumerate(lines):
            line = raw.decode("utf8")
            if line.startswith(": "):
                sections.append(
                    {"section": line.lstrip(": ").strip(), "correct": [], "incorrect": []}
                )
            elif not sections:
                raise ValueError(f"Missing section header before line #{number} in {analogies}")
            elif len(line.split()) == 4:  # gensim skips a line that is not four words
                entries.append((len(sections) - 1, line.rstrip("\n")))
    if not entries:  # gensim divides by the number of questions for its log
        raise ZeroDivisionError(f"no analogy questions in {analogies}")
    return sections, entries


def _chunk_text(chunk: Sequence[Entry]) -> str:
    """Question lines as /evaluate reads them, under headers that name each section by its
    index (": 3"), so the answer's sections say where their questions belong."""
    lines, current = [], -1
    for index, line in chunk:
        if index != current:
            lines.append(f": {index}")
            current = index
        lines.append(line)
    return "\n".join(lines) + "\n"


def _accuracy(section: Section) -> float:
    correct, incorrect = len(section["correct"]), len(section["incorrect"])
    return 0.0 if correct + incorrect == 0 else correct / (correct + incorrect)


def evaluate_word_pairs(
    kv: RemoteKeyedVectors,
    pairs: str | os.PathLike[str],
    delimiter: str,
    encoding: str,
    restrict_vocab: int,
    case_insensitive: bool,
    dummy4unknown: bool,
) -> tuple[Correlation, Correlation, float]:
    """(Pearson, Spearman, percent of pairs out of vocabulary), as gensim; with
    `dummy4unknown` a pair out of vocabulary scores 0.0 and counts in the correlations."""
    with _open(pairs, "r", encoding) as lines:
        judgements = "".join(_judgements(lines, delimiter))
    result = kv.client.evaluate(
        kv.table,
        pairs=judgements,
        restrict=restrict_vocab,
        case_insensitive=case_insensitive,
        dummy4unknown=dummy4unknown,
    )
    pearson = Correlation(result.pearson.r, result.pearson.p_value)
    spearman = Correlation(result.spearman.r, result.spearman.p_value)
    return pearson, spearman, result.oov_percent


def _judgements(lines: Iterator[Any], delimiter: str) -> Iterator[str]:
    """The lines gensim reads as word pairs, as the service's TAB-separated lines."""
    for line in lines:
        if not line or line.startswith("#"):
            continue
        parts = line.split(delimiter)
        if len(parts) != 3:
            continue  # gensim skips it as invalid
        first, second, score = parts
        if "\t" in first + second or "\n" in first + second:
            raise ValueError(f"a word of {line!r} holds a tab or a line break")
        yield f"{first}\t{second}\t{score.strip()}\n"


def _open(path: str | os.PathLike[str], mode: str, encoding: str | None = None) -> IO[Any]:
    """A file, decompressed on the way if its name ends .gz or .bz2 (as gensim's utils.open)."""
    name = os.fspath(path)
    compressed_mode = "rt" if mode == "r" else "rb"
    if name.endswith(".gz"):
        return gzip.open(name, compressed_mode, encoding=encoding)  # type: ignore[return-value]
    if name.endswith(".bz2"):
        return bz2.open(name, compressed_mode, encoding=encoding)
    return open(name, mode, encoding=encoding)
