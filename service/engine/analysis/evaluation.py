"""Word-analogy evaluation through the batch path, with gensim's evaluate_word_analogies rules.

Same rules as gensim: with `case_insensitive` words are compared upper-cased (the first row of
each upper-cased form wins), questions with a word outside the first `restrict_vocab` rows are
skipped (out of vocabulary; with `dummy4unknown`, counted as incorrect in their place), each
question is answered by 3CosAdd top-5 with its three words excluded, and the first answer that
is not one of the question's words is the prediction. Sections are kept in file order, a
repeated name as a new section, as gensim does.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from service.engine.errors import InvalidQuery
from service.engine.safe_points import safe_point
from service.engine.search.cosine import CosineSearch
from service.engine.search.queries import AnalogyQuery, SearchOptions, Term

TOP = 5
GENSIM_RESTRICT = 300_000
# gensim's figures come from exhaustive search, so evaluation never takes an index's shortcut.
EXHAUSTIVE = SearchOptions(exact=True)
Question = tuple[str, str, str, str]
T = TypeVar("T")


@dataclass
class Section:
    """Correct and incorrect questions of one section of the analogy file."""

    name: str
    correct: list[Question] = field(default_factory=list)
    incorrect: list[Question] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        """Correct / evaluated, 0 when nothing was evaluated (gensim's convention)."""
        answered = len(self.correct) + len(self.incorrect)
        return len(self.correct) / answered if answered else 0.0


@dataclass
class AnalogyEvaluation:
    """Per-section results, the total, the questions out of vocabulary (skipped, or incorrect
    with dummy4unknown) and the lines unreadable."""

    sections: list[Section]
    questions: int
    oov: int
    invalid_lines: int = 0

    @property
    def correct(self) -> int:
        """Questions answered correctly."""
        return sum(len(s.correct) for s in self.sections)

    @property
    def answered(self) -> int:
        """Questions counted: evaluated, and out of vocabulary with dummy4unknown."""
        return self.correct + sum(len(s.incorrect) for s in self.sections)

    @property
    def accuracy(self) -> float:
        """Correct / evaluated."""
        return self.correct / self.answered if self.answered else 0.0

    @property
    def oov_percent(self) -> float:
        """Share (%) of well-formed questions with an unknown word (gensim's oov_ratio)."""
        return 100.0 * self.oov / self.questions if self.questions else 0.0


@dataclass
class ParsedQuestions:
    """An analogy file read as gensim reads it."""

    sections: list[Section]
    questions: list[tuple[Section, Question]]
    invalid_lines: int


def file_lines(text: str) -> list[str]:
    """Lines as iterating over the file yields them (split at newlines only), without '\\n'."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def read_questions(text: str, case_insensitive: bool = True) -> ParsedQuestions:
    """Sections and well-formed questions; InvalidQuery for a question before any section."""
    sections: list[Section] = []
    questions: list[tuple[Section, Question]] = []
    invalid = 0
    for number, line in enumerate(file_lines(text), start=1):
        if line.startswith(": "):
            sections.append(Section(line.lstrip(": ").strip()))
            continue
        if not sections:
            raise InvalidQuery(f"line {number}: analogy questions must follow a ': section' line")
        words = (line.upper() if case_insensitive else line).split()
        if len(words) != 4:
            invalid += 1
            continue
        questions.append((sections[-1], (words[0], words[1], words[2], words[3])))
    return ParsedQuestions(sections, questions, invalid)


def vocabulary(search: CosineSearch, restrict_vocab: int, case_insensitive: bool) -> dict:
    """Word -> row over the first `restrict_vocab` rows; upper-cased, first row winning."""
    tokens = search.table.tokens[:restrict_vocab]
    if not case_insensitive:
        return {token: row for row, token in enumerate(tokens)}
    words: dict[str, int] = {}
    for row, token in enumerate(tokens):
        words.setdefault(token.upper(), row)
    return words


def evaluate_analogies(
    search: CosineSearch,
    parsed: ParsedQuestions,
    restrict_vocab: int = GENSIM_RESTRICT,
    case_insensitive: bool = True,
    batch_size: int = 1024,
    dummy4unknown: bool = False,
) -> AnalogyEvaluation:
    """Evaluate parsed questions in batches of `batch_size` analogy queries; with
    `dummy4unknown`, a question out of vocabulary is incorrect (gensim's), in its place."""
    words = vocabulary(search, restrict_vocab, case_insensitive)
    known = [q for _, q in parsed.questions if all(word in words for word in q)]
    fold = str.upper if case_insensitive else str.__str__
    predictions: list[str] = []
    for start in range(0, len(known), batch_size):
        safe_point()  # a caller that gave up stops here: 20,000 questions take seconds
        chunk = known[start : start + batch_size]
        predictions += _predict(search, words, chunk, restrict_vocab, fold)
    predicted = iter(predictions)
    for section, question in parsed.questions:
        if all(word in words for word in question):
            right = next(predicted) == question[3]
            (section.correct if right else section.incorrect).append(question)
        elif dummy4unknown:
            section.incorrect.append(question)
    oov = len(parsed.questions) - len(known)
    return AnalogyEvaluation(parsed.sections, len(parsed.questions), oov, parsed.invalid_lines)


def _predict(
    search: CosineSearch,
    words: dict[str, int],
    questions: list[Question],
    restrict: int,
    fold: Callable[[str], str],
) -> list[str]:
    terms = {word: Term(row=words[word]) for question in questions for word in question[:3]}
    # Exhaustive even on a table with an approximate index: these are gensim's figures.
    queries = [
        AnalogyQuery(
            positive=(terms[b], terms[c]),
            negative=(terms[a],),
            k=TOP,
            restrict=restrict,
            options=EXHAUSTIVE,
        )
        for a, b, c, _ in questions
    ]
    results = search.analogies(queries)
    tokens = search.table.tokens
    return [
        _first_new((fold(tokens[row]) for row in result.ids.tolist()), set(question[:3]))
        for question, result in zip(questions, results, strict=True)
    ]


def _first_new(predictions: Iterable[str], inputs: set[str]) -> str:
    """gensim's rule: the first prediction not among the inputs, else the last one."""
    predicted = ""
    for predicted in predictions:
        if predicted not in inputs:
            break
    return predicted


class KeptEvaluations:
    """One table load's evaluations by the sets shipped with the service, each computed once
    and answered from then on; a reload makes a new ServedTable, and so new ones. The last
    `keep` distinct ones are kept (the same set under other options is another one)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, key: Hashable, compute: Callable[[], T], keep: int) -> T:
        """The evaluation kept under `key`, else compute()'s, kept. One computation at a time:
        a caller of the same key waits for it rather than computing it again, and one that
        fails or is abandoned (safe_points.py) keeps nothing."""
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                kept: T = self._kept[key]
                return kept
            evaluation = compute()
            self._kept[key] = evaluation
            while len(self._kept) > max(keep, 1):
                self._kept.popitem(last=False)
            return evaluation
