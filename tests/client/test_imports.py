"""Importing the client is light: numpy, httpx and the standard library, never the server."""

from __future__ import annotations

import json
import subprocess
import sys

# Packages the client must never bring in: the server and its heavy dependencies.
FORBIDDEN = {"service", "faiss", "fastapi", "starlette", "pydantic", "uvicorn", "scipy", "gensim"}


def loaded_by(statement: str) -> set[str]:
    """The top-level packages a fresh interpreter has loaded after `statement`."""
    program = (
        f"import json, sys; {statement}; "
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    return set(json.loads(subprocess.check_output([sys.executable, "-c", program], text=True)))


def test_importing_the_client_loads_nothing_beyond_numpy_httpx_and_the_standard_library() -> None:
    client = loaded_by("import embedding_service")
    assert not client & FORBIDDEN
    # Whatever httpx itself imports in this environment (its optional decoders, its CLI) is
    # httpx's; the client may add only itself and standard modules.
    baseline = loaded_by("import numpy, httpx")
    added = client - baseline - {"embedding_service"}
    assert added <= set(sys.stdlib_module_names), added - set(sys.stdlib_module_names)
