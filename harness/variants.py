"""A server variant to measure side by side: a checkout of the service and its settings."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Variant:
    """A server to measure: its source folder and environment."""

    name: str
    folder: str
    env: dict[str, str]

    @classmethod
    def parse(cls, text: str) -> Variant:
        """NAME=DIR[:VAR=VALUE,...]"""
        name, _, rest = text.partition("=")
        folder, _, assignments = rest.partition(":")
        return cls(name, os.path.abspath(folder), settings_of(assignments))


def settings_of(assignments: str) -> dict[str, str]:
    """`VAR=VALUE,...` (a variant's server settings) as a dict; empty for ""."""
    return dict(item.split("=", 1) for item in assignments.split(",") if item)
