"""Candidate selection: never loses a row of the true top-k, ties and padding included."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine.search.selection import GROUPS, candidate_rows


@settings(max_examples=80, deadline=None)
@given(
    rows=st.integers(1, 6),
    columns=st.sampled_from([20, 300, GROUPS * 40, GROUPS * 40 + 17, 5000]),
    depth=st.integers(1, 15),
    levels=st.sampled_from([3, 50, 10_000]),
    seed=st.integers(0, 2**32 - 1),
)
def test_candidates_hold_every_row_that_can_make_the_top(
    rows: int, columns: int, depth: int, levels: int, seed: int
) -> None:
    # Few distinct levels force many exact ties; many levels make them rare.
    rng = np.random.default_rng(seed)
    scores = (rng.integers(0, levels, size=(rows, columns)) / levels).astype(np.float32)
    slack = 1e-6
    for row, found in zip(scores, candidate_rows(scores, depth, slack), strict=True):
        kth = np.sort(row)[::-1][min(depth, columns) - 1]
        must = set(np.flatnonzero(row >= kth - slack).tolist())
        assert must <= set(found.tolist())
        assert len(set(found.tolist())) == len(found)  # no column twice
