"""Fixtures of the loader tests."""

from __future__ import annotations

import numpy as np
import pytest

from tests.engine.loaders.helpers import (
    TOKENS,
    WIDTH,
)


@pytest.fixture
def vectors() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((len(TOKENS), WIDTH)).astype(np.float32)
