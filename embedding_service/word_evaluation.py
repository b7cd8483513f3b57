"""gensim's evaluate_word_analogies and evaluate_word_pairs for a RemoteKeyedVectors.

Analogies: the file is read here as gensim reads it, the restricted vocabulary is paged in
(gensim's ok_vocab: the first row of each upper-cased key), and the questions go to the server
as batches of 3CosAdd queries, top 5, as gensim's most_similar asks them; the answer has
gensim's shape, every question listed as correct or incorrect (the service's /evaluate returns
only the counts). Word pairs: the file is read here (with its delimiter and encoding) and its
judgements are sent to the service's /evaluate, which computes gensim's Pearson and Spearman
figures with scipy's p-values (the client cannot import scipy).
"""

from __future__ import annotations

import bz2
import gzip
import itertools
import os
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any, NamedTuple

from embedding_service.models.search import Analogy

if TYPE_CHECKING:
    from embedding_service.keyedvectors import RemoteKeyedVectors

Question = tuple[str, str, str, str]
Section = dict[str, Any]


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
    """(accuracy over every evaluated question, sections then their total), as gensim."""
    ok_vocab = _ok_vocab(kv, restrict_vocab, case_insensitive)
    sections, entries = _read_questions(analogies, case_insensitive)
    asked = [question for _, question in entries if all(word in ok_vocab for word in question)]
    verdicts = iter(_verdicts(kv, asked, ok_vocab, restrict_vocab, case_insensitive))
    for section, question in entries:
        if all(word in ok_vocab for word in question):
            section["correct" if next(verdicts) else "incorrect"].append(question)
        elif dummy4unknown:  # an out-of-vocabulary question counts as wrong, in its place
            section["incorrect"].append(question)
    total = {
        "section": "Total accuracy",
        "correct": list(itertools.chain.from_iterable(s["correct"] for s in sections)),
        "incorrect": list(itertools.chain.from_iterable(s["incorrect"] for s in sections)),
    }
    sections.append(total)
    return _accuracy(total), sections


def _read_questions(
    analogies: str | os.PathLike[str], case_insensitive: bool
) -> tuple[list[Section], list[tuple[Section, Question]]]:
    """The file's sections (still empty) and every well-formed question with its section."""
    sections: list[Section] = []
    entries: list[tuple[Section, Question]] = []
    with _open(analogies, "rb") as lines:
        for number, raw in enumerate(lines):
            line = raw.decode("utf8")
            if line.startswith(": "):
                sections.append(
                    {"section": line.lstrip(": ").strip(), "correct": [], "incorrect": []}
                )
            elif not sections:
                raise ValueError(f"Missing section header before line #{number} in {analogies}")
            elif (question := _question(line, case_insensitive)) is not None:
                entries.append((sections[-1], question))
    if not entries:  # gensim divides by the number of questions for its log
        raise ZeroDivisionError(f"no analogy questions in {analogies}")
    return sections, entries


def _ok_vocab(
    kv: RemoteKeyedVectors, restrict_vocab: int, case_insensitive: bool
) -> dict[str, int]:
    """gensim's ok_vocab: each key of the first rows (upper-cased) -> its first row."""
    keys = kv.index_to_key[:restrict_vocab]
    if case_insensitive:
        return {key.upper(): index for index, key in reversed(list(enumerate(keys)))}
    return {key: index for index, key in reversed(list(enumerate(keys)))}


def _question(line: str, case_insensitive: bool) -> Question | None:
    words = line.split()
    if len(words) != 4:
        return None  # gensim skips a line that is not four words
    a, b, c, expected = (word.upper() for word in words) if case_insensitive else words
    return a, b, c, expected


def _verdicts(
    kv: RemoteKeyedVectors,
    asked: list[Question],
    ok_vocab: dict[str, int],
    restrict_vocab: int,
    case_insensitive: bool,
) -> list[bool]:
    """Whether each question is answered right, asked of the server in batches, in order."""
    if not asked:
        return []
    key = kv.index_to_key
    queries = [
        Analogy([key[ok_vocab[b]], key[ok_vocab[c]]], [key[ok_vocab[a]]]) for a, b, c, _ in asked
    ]
    results = kv.client.analogy(kv.table, queries, k=5, restrict=restrict_vocab, exact=kv.exact)
    verdicts = []
    for question, neighbors in zip(asked, results, strict=True):
        ignore = set(question[:3])
        predicted = None
        for neighbor in neighbors:  # gensim's first of the top 5 that is not a question word
            predicted = neighbor.token.upper() if case_insensitive else neighbor.token
            if predicted in ok_vocab and predicted not in ignore:
                break
        verdicts.append(predicted == question[3])
    return verdicts


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
    """(Pearson, Spearman, percent of pairs out of vocabulary), as gensim."""
    if dummy4unknown:
        raise NotImplementedError(
            "evaluate_word_pairs(dummy4unknown=True): the service's /evaluate has no option "
            "to score unknown pairs as 0 (docs/client.md, 'What needs the server')"
        )
    with _open(pairs, "r", encoding) as lines:
        judgements = "".join(_judgements(lines, delimiter))
    result = kv.client.evaluate(
        kv.table, pairs=judgements, restrict=restrict_vocab, case_insensitive=case_insensitive
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
