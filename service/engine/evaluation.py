"""Word-analogy evaluation through the batch path, with gensim's evaluate_word_analogies rules.

Same rules as gensim: words are compared upper-cased (the first row of each case-folded form
wins), questions with a word outside the first `restrict_vocab` rows are skipped, each question
is answered by 3CosAdd top-5 with its three words excluded, and the first answer that is not
one of the question's words (case-insensitively) is the prediction.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from service.engine.index import SimilarityIndex
from service.engine.queries import AnalogyQuery, Term

TOP = 5
Question = tuple[str, str, str, str]


@dataclass
class Section:
    """Correct and incorrect questions of one section of the analogy file."""

    name: str
    correct: list[Question] = field(default_factory=list)
    incorrect: list[Question] = field(default_factory=list)


@dataclass
class AnalogyEvaluation:
    """Per-section results, the total accuracy and how many questions were skipped."""

    sections: list[Section]
    skipped: int

    @property
    def correct(self) -> int:
        """Questions answered correctly."""
        return sum(len(s.correct) for s in self.sections)

    @property
    def answered(self) -> int:
        """Questions evaluated (not skipped)."""
        return self.correct + sum(len(s.incorrect) for s in self.sections)

    @property
    def accuracy(self) -> float:
        """Correct / evaluated."""
        return self.correct / self.answered if self.answered else 0.0


def read_questions(path: Path) -> Iterator[tuple[str, Question]]:
    """(section, (a, b, c, expected)) for every well-formed line, upper-cased."""
    section = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith(": "):
            section = line[2:].strip()
            continue
        words = line.upper().split()
        if len(words) == 4:
            yield section, (words[0], words[1], words[2], words[3])


def evaluate_analogies(
    index: SimilarityIndex, path: Path, restrict_vocab: int = 300_000, batch_size: int = 1024
) -> AnalogyEvaluation:
    """Evaluate `path` (questions-words.txt format) in batches of `batch_size` queries."""
    vocabulary = _upper_vocabulary(index, restrict_vocab)
    sections: dict[str, Section] = {}
    known, skipped = [], 0
    for name, question in read_questions(path):
        sections.setdefault(name, Section(name))
        if all(word in vocabulary for word in question):
            known.append((name, question))
        else:
            skipped += 1
    for start in range(0, len(known), batch_size):
        chunk = known[start : start + batch_size]
        predictions = _predict(index, vocabulary, [q for _, q in chunk], restrict_vocab)
        for (name, question), predicted in zip(chunk, predictions, strict=True):
            section = sections[name]
            (section.correct if predicted == question[3] else section.incorrect).append(question)
    return AnalogyEvaluation(list(sections.values()), skipped)


def _upper_vocabulary(index: SimilarityIndex, restrict_vocab: int) -> dict[str, int]:
    vocabulary: dict[str, int] = {}
    for row, token in enumerate(index.table.tokens[:restrict_vocab]):
        vocabulary.setdefault(token.upper(), row)
    return vocabulary


def _predict(
    index: SimilarityIndex, vocabulary: dict[str, int], questions: list[Question], restrict: int
) -> list[str]:
    terms = {word: Term(row=vocabulary[word]) for question in questions for word in question[:3]}
    queries = [
        AnalogyQuery(positive=(terms[b], terms[c]), negative=(terms[a],), k=TOP, restrict=restrict)
        for a, b, c, _ in questions
    ]
    results = index.analogies(queries)
    tokens = index.table.tokens
    return [
        _first_new((tokens[row].upper() for row in result.ids.tolist()), set(question[:3]))
        for question, result in zip(questions, results, strict=True)
    ]


def _first_new(predictions: Iterable[str], inputs: set[str]) -> str:
    """gensim's rule: the first prediction not among the inputs, else the last one."""
    predicted = ""
    for predicted in predictions:
        if predicted not in inputs:
            break
    return predicted
