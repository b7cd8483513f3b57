"""docs/client.md's examples run as they are written, against a real server."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs" / "client.md"
EXAMPLES = re.findall(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.DOTALL)

pytestmark = pytest.mark.slow


def test_the_docs_have_examples() -> None:
    assert len(EXAMPLES) >= 5


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"example-{i}" for i in range(len(EXAMPLES))])
def test_each_example_runs(example: str, served: str) -> None:
    assert "http://127.0.0.1:8000" in example
    code = example.replace("http://127.0.0.1:8000", served)
    exec(compile(code, str(DOCS), "exec"), {"__name__": "docs_example"})
