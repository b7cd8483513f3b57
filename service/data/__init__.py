"""Evaluation sets shipped with the service (see NOTICE for where each comes from)."""

from __future__ import annotations

from importlib import resources

# Built-in set name -> (file in this package, kind of evaluation).
BUILTIN_SETS = {"questions-words": ("questions-words.txt", "analogies")}


def builtin_text(name: str) -> tuple[str, str]:
    """(text, kind) of a built-in evaluation set."""
    filename, kind = BUILTIN_SETS[name]
    return resources.files(__name__).joinpath(filename).read_text(encoding="utf-8"), kind
