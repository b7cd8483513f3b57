"""RemoteKeyedVectors' evaluations against gensim's on the same table files: every section's
correct and incorrect analogy questions exactly (dummy4unknown too, both case modes), and the
word-pair correlations within 1e-5 with scipy's p-values (dummy4unknown too)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from gensim.test.utils import datapath

from tests.client.parity import SCORE_TOLERANCE, Pair

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def questions(tmp_path_factory: pytest.TempPathFactory) -> str:
    """gensim's questions-words.txt, 40 seeded questions of each section (gensim itself takes
    80 s for the whole file on MiniLM)."""
    rng = np.random.default_rng(11)
    sections: list[list[str]] = []
    with open(datapath("questions-words.txt"), encoding="utf-8") as lines:
        for line in lines:
            if line.startswith(": "):
                sections.append([line])
            else:
                sections[-1].append(line)
    chosen = [
        [header, *(body[i] for i in sorted(rng.choice(len(body), 40, replace=False)))]
        for header, *body in sections
    ]
    path = tmp_path_factory.mktemp("questions") / "questions-words.txt"
    path.write_text("".join(line for section in chosen for line in section), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("case_insensitive", [True, False])
@pytest.mark.parametrize("name", ["minilm", "word2vec", "fasttext"])
def test_evaluate_word_analogies(
    pairs: dict[str, Pair], questions: str, name: str, case_insensitive: bool
) -> None:
    local, remote = pairs[name]
    path = questions if name == "minilm" else datapath("questions-words.txt")
    restrict = 20000
    expected = local.evaluate_word_analogies(path, restrict, case_insensitive)
    assert remote.evaluate_word_analogies(path, restrict, case_insensitive) == expected
    answered = remote.evaluate_word_analogies(path, restrict, case_insensitive, dummy4unknown=True)
    assert answered == local.evaluate_word_analogies(path, restrict, case_insensitive, True)


@pytest.mark.parametrize("file", ["wordsim353.tsv", "simlex999.txt"])
@pytest.mark.parametrize("name", ["minilm", "word2vec", "fasttext"])
def test_evaluate_word_pairs(pairs: dict[str, Pair], name: str, file: str) -> None:
    local, remote = pairs[name]
    for case_insensitive, dummy4unknown in itertools.product((True, False), (False, True)):
        options = {"case_insensitive": case_insensitive, "dummy4unknown": dummy4unknown}
        expected = local.evaluate_word_pairs(datapath(file), **options)
        answer = remote.evaluate_word_pairs(datapath(file), **options)
        for ours, theirs in zip(answer[:2], expected[:2], strict=True):
            assert ours.statistic == pytest.approx(theirs.statistic, abs=SCORE_TOLERANCE)
            assert ours.pvalue == pytest.approx(theirs.pvalue, rel=1e-4, abs=1e-300)
        assert answer[2] == pytest.approx(expected[2], abs=1e-12)
