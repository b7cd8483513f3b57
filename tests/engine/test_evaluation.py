"""The analogy evaluation through the batch path against gensim's evaluate_word_analogies."""

from __future__ import annotations

from pathlib import Path

import pytest
from gensim.models import KeyedVectors
from gensim.test.utils import datapath

from service.engine.evaluation import evaluate_analogies, read_questions
from service.engine.index import SimilarityIndex
from service.engine.table import EmbeddingTable

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
        SimilarityIndex(minilm), parsed, restrict_vocab=restrict_vocab, batch_size=100
    )

    assert [s.name for s in ours.sections] == [s["section"] for s in theirs[:-1]]
    for section, their_section in zip(ours.sections, theirs, strict=False):
        assert section.correct == their_section["correct"], section.name
        assert section.incorrect == their_section["incorrect"], section.name
    assert ours.answered > 400  # not vacuous: 481 with restrict_vocab=8000
    assert ours.accuracy == pytest.approx(score, abs=0)
