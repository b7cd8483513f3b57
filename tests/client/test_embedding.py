"""Client.embed against a real server: the static model's own vectors, as numpy, in chunks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from embedding_service import Client, LimitExceeded
from tests.static_models import texts, wordllama_oracle

pytestmark = pytest.mark.slow

TOLERANCE = 1e-5


def test_embed_answers_wordllama_s_own_vectors(sync_client: Client, tmp_path: Path) -> None:
    some = [text for text in texts() if text] * 2  # 414 texts: two chunks of at most 256
    vectors = sync_client.embed("wordllama", some)
    assert vectors.dtype == np.float32 and vectors.shape == (len(some), 256)
    expected = wordllama_oracle(tmp_path).embed(some)
    np.testing.assert_allclose(vectors, expected, rtol=0, atol=TOLERANCE)


def test_one_text_is_one_vector_and_widths_cut(sync_client: Client, tmp_path: Path) -> None:
    one = sync_client.embed("wordllama", "a single text", dimensions=128)
    expected = wordllama_oracle(tmp_path, trunc_dim=128).embed(["a single text"])[0]
    assert one.shape == (128,)
    np.testing.assert_allclose(one, expected, rtol=0, atol=TOLERANCE)


def test_a_text_past_the_limit_is_the_server_s_error(sync_client: Client) -> None:
    with pytest.raises(LimitExceeded, match="one embedding input is 9000"):
        sync_client.embed("wordllama", ["a" * 9000])
