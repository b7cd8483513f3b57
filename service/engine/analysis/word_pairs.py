"""Word-pair similarity evaluation with gensim's evaluate_word_pairs rules.

Lines are `word<TAB>word<TAB>human score`; empty lines and lines starting with '#' are skipped,
as are lines that do not split into three fields with a number last (counted as invalid; a
non-finite score is invalid too, where gensim would carry a NaN into its correlations). A pair
with a word outside the first `restrict_vocab` rows is out of vocabulary and skipped (with
`dummy4unknown`, gensim's, it scores 0.0 and counts in the correlations). The
model's score is the cosine of the two rows (0 for a zero row, as gensim's unit vector of zero
is zero), and the figures are Pearson's and Spearman's correlations with their p-values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from service.engine.analysis.evaluation import GENSIM_RESTRICT, file_lines, vocabulary
from service.engine.analysis.statistics import Correlation, pearson, spearman
from service.engine.errors import InvalidQuery
from service.engine.search.cosine import CosineSearch

DELIMITER = "\t"


@dataclass(frozen=True)
class Pair:
    """One judged pair, words as compared (upper-cased when case-insensitive)."""

    first: str
    second: str
    score: float


@dataclass(frozen=True)
class ParsedPairs:
    """A word-pair file read as gensim reads it."""

    pairs: list[Pair]
    invalid_lines: int


@dataclass(frozen=True)
class PairsEvaluation:
    """gensim's figures: both correlations, the pairs they count (those out of vocabulary too,
    with dummy4unknown), and the pairs out of vocabulary among all readable pairs."""

    pearson: Correlation
    spearman: Correlation
    scored: int
    oov: int
    readable: int
    invalid_lines: int

    @property
    def oov_percent(self) -> float:
        """Share (%) of readable pairs with an unknown word (gensim's oov_ratio, which with
        dummy4unknown divides by the pairs correlated: all of them)."""
        return 100.0 * self.oov / self.readable


def read_pairs(text: str, case_insensitive: bool = True) -> ParsedPairs:
    """Every readable judgement of a word-pair file."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # text mode's universal newlines
    pairs, invalid = [], 0
    for line in file_lines(text):
        if not line or line.startswith("#"):
            continue
        pair = _pair(line.upper() if case_insensitive else line)
        if pair is None:
            invalid += 1
        else:
            pairs.append(pair)
    return ParsedPairs(pairs, invalid)


def _pair(line: str) -> Pair | None:
    fields = line.split(DELIMITER)
    if len(fields) != 3:
        return None
    try:
        score = float(fields[2])
    except ValueError:
        return None
    return Pair(fields[0], fields[1], score) if math.isfinite(score) else None


def evaluate_pairs(
    search: CosineSearch,
    parsed: ParsedPairs,
    restrict_vocab: int = GENSIM_RESTRICT,
    case_insensitive: bool = True,
    dummy4unknown: bool = False,
) -> PairsEvaluation:
    """Correlations of the table's cosines with the human scores of the known pairs (with
    `dummy4unknown`, of every pair, 0.0 for those out of vocabulary)."""
    words = vocabulary(search, restrict_vocab, case_insensitive)
    known = [p.first in words and p.second in words for p in parsed.pairs]
    counted = [p for p, inside in zip(parsed.pairs, known, strict=True) if inside or dummy4unknown]
    gold, model = np.array([pair.score for pair in counted]), _model_scores(search, words, counted)
    linear, ranked = pearson(gold, model), spearman(gold, model)
    if linear is None or ranked is None:
        raise InvalidQuery(
            f"{len(counted)} pairs are counted: correlations need at least 3, with scores "
            "that are not all equal"
        )
    oov = known.count(False)
    return PairsEvaluation(
        linear, ranked, len(counted), oov, len(parsed.pairs), parsed.invalid_lines
    )


def _model_scores(search: CosineSearch, words: dict, pairs: list[Pair]) -> np.ndarray:
    """Each pair's cosine; 0.0 for a pair out of vocabulary (gensim's dummy4unknown)."""
    inside = np.array([p.first in words and p.second in words for p in pairs], dtype=bool)
    chosen = [pair for pair, known in zip(pairs, inside.tolist(), strict=True) if known]
    scores = np.zeros(len(pairs))
    scores[inside] = cosines(
        search, [words[p.first] for p in chosen], [words[p.second] for p in chosen]
    )
    return scores


def cosines(search: CosineSearch, left: list[int], right: list[int]) -> np.ndarray:
    """Cosine of each pair of rows in float64; 0 where either row is zero."""
    store = search.store
    first, second = np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64)
    dots = np.einsum(
        "ij,ij->i",
        store.vectors[first].astype(np.float64),
        store.vectors[second].astype(np.float64),
    )
    scale = store.norms64[first] * store.norms64[second]
    return np.divide(dots, scale, out=np.zeros_like(dots), where=scale > 0)
