"""Analogy and word-pair evaluation against gensim's evaluate_word_analogies / _pairs."""

from __future__ import annotations

from pathlib import Path

import pytest
from gensim.models import KeyedVectors
from gensim.test.utils import datapath

from service.engine.analysis.evaluation import evaluate_analogies, read_questions
from service.engine.analysis.word_pairs import evaluate_pairs, read_pairs
from service.engine.errors import InvalidQuery
from service.engine.search.cosine import CosineSearch
from service.engine.tables.table import EmbeddingTable

pytestmark = pytest.mark.slow

# Every STRIDE-th question of each section keeps every section while the test stays quick.
STRIDE = 7


@pytest.fixture(scope="module")
def questions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sample of the Google analogy set, every section kept."""
    lines, seen = [], 0
    for line in Path(datapath("questions-words.txt")).read_text(encoding="utf-8").splitlines():
        header = line.startswith(": ")
        if header or seen % STRIDE == 0:
            lines.append(line)
        seen += not header
    path = tmp_path_factory.mktemp("analogies") / "questions.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("restrict_vocab", [300_000, 8_000])
def test_same_answers_as_gensim(minilm: EmbeddingTable, questions: Path, restrict_vocab) -> None:
    vectors = KeyedVectors(vector_size=minilm.width)
    vectors.add_vectors(list(minilm.tokens), minilm.vectors.copy())
    score, theirs = vectors.evaluate_word_analogies(str(questions), restrict_vocab=restrict_vocab)
    # Batches smaller than a section, so questions of different sections share batches.
    parsed = read_questions(questions.read_text(encoding="utf-8"))
    ours = evaluate_analogies(
        CosineSearch(minilm), parsed, restrict_vocab=restrict_vocab, batch_size=100
    )

    assert [s.name for s in ours.sections] == [s["section"] for s in theirs[:-1]]
    for section, their_section in zip(ours.sections, theirs, strict=False):
        assert section.correct == their_section["correct"], section.name
        assert section.incorrect == their_section["incorrect"], section.name
    assert ours.answered > 400  # not vacuous: 481 with restrict_vocab=8000
    assert ours.accuracy == pytest.approx(score, abs=0)


@pytest.fixture(scope="module")
def gensim_minilm(minilm: EmbeddingTable) -> KeyedVectors:
    """The same table in gensim."""
    vectors = KeyedVectors(vector_size=minilm.width)
    vectors.add_vectors(list(minilm.tokens), minilm.vectors.copy())
    return vectors


def test_case_sensitive_analogies_as_gensim(
    minilm: EmbeddingTable, gensim_minilm: KeyedVectors, questions: Path
) -> None:
    score, theirs = gensim_minilm.evaluate_word_analogies(str(questions), case_insensitive=False)
    parsed = read_questions(questions.read_text(encoding="utf-8"), case_insensitive=False)
    ours = evaluate_analogies(CosineSearch(minilm), parsed, case_insensitive=False)
    for section, their_section in zip(ours.sections, theirs, strict=False):
        assert section.correct == their_section["correct"], section.name
        assert section.incorrect == their_section["incorrect"], section.name
    assert ours.accuracy == pytest.approx(score, abs=0)
    assert ours.answered > 50  # the capitalised country names of the file are not in MiniLM


@pytest.mark.parametrize("dummy4unknown", [False, True])  # True: out of vocabulary scores 0
@pytest.mark.parametrize("name", ["wordsim353.tsv", "simlex999.txt"])
@pytest.mark.parametrize(("restrict", "case_insensitive"), [(300_000, True), (8_000, False)])
def test_word_pairs_as_gensim(
    minilm: EmbeddingTable,
    gensim_minilm: KeyedVectors,
    name,
    restrict,
    case_insensitive,
    dummy4unknown,
) -> None:
    path = datapath(name)
    pearson, spearman, oov_ratio = gensim_minilm.evaluate_word_pairs(
        path,
        restrict_vocab=restrict,
        case_insensitive=case_insensitive,
        dummy4unknown=dummy4unknown,
    )
    parsed = read_pairs(Path(path).read_text(encoding="utf-8"), case_insensitive)
    ours = evaluate_pairs(CosineSearch(minilm), parsed, restrict, case_insensitive, dummy4unknown)
    # gensim's cosines are float32 and ours float64: the same figures to about 1e-7.
    assert ours.pearson.r == pytest.approx(pearson.statistic, abs=1e-6)
    assert ours.pearson.p_value == pytest.approx(pearson.pvalue, rel=1e-4)
    assert ours.spearman.r == pytest.approx(spearman.statistic, abs=1e-9)
    assert ours.spearman.p_value == pytest.approx(spearman.pvalue, rel=1e-6)
    assert ours.oov_percent == pytest.approx(oov_ratio, abs=1e-12)
    assert ours.scored > 150 and ours.oov > 0
    assert (ours.scored == len(parsed.pairs)) == dummy4unknown


def test_pair_lines_gensim_skips_are_skipped() -> None:
    text = "# comment\nA\tB\t1.5\r\nbad line\nC\tD\tnot a number\nE\tF\tnan\n\nG\tH\t2\n"
    parsed = read_pairs(text, case_insensitive=False)
    assert [(p.first, p.second, p.score) for p in parsed.pairs] == [("A", "B", 1.5), ("G", "H", 2)]
    assert parsed.invalid_lines == 3


def test_a_question_before_any_section_is_refused() -> None:
    with pytest.raises(InvalidQuery, match="line 1"):
        read_questions("a b c d\n: section\n")


def test_questions_out_of_vocabulary_count_as_incorrect_in_place(
    minilm: EmbeddingTable, gensim_minilm: KeyedVectors, questions: Path
) -> None:
    _, theirs = gensim_minilm.evaluate_word_analogies(
        str(questions), restrict_vocab=8000, dummy4unknown=True
    )
    parsed = read_questions(questions.read_text(encoding="utf-8"))
    ours = evaluate_analogies(CosineSearch(minilm), parsed, 8000, batch_size=64, dummy4unknown=True)
    for section, their_section in zip(ours.sections, theirs, strict=False):
        assert section.correct == their_section["correct"], section.name
        assert section.incorrect == their_section["incorrect"], section.name
    assert ours.answered == ours.questions and ours.oov > 1000  # every question is counted
