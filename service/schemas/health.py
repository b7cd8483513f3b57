"""Liveness and readiness answers."""

from __future__ import annotations

from typing import Literal

from service.schemas.common import Strict


class Health(Strict):
    status: Literal["ok"]


class Readiness(Strict):
    status: Literal["ready"]
    tables: list[str]
